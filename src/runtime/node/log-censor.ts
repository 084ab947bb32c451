/**
 * Censors fields that could hold a secret, by name, at the top of a log line's fields and one level down
 * (what pino's `redact` paths `k` and `*.k` did). Written here rather than taken from pino's `redact`
 * option: pino 10's redactor parses every path on every call and copies the fields, about 44 KB of
 * garbage per request on the access line alone (heap sampling under load, docs/performance.md),
 * while the code logs key ids, never keys, so nearly every line has nothing to censor. A line that does is
 * copied, never changed in place: the caller's objects stay as they were.
 */
export const CENSORED = '[redacted]';

const SECRET_FIELDS = new Set(['authorization', 'secret', 'apiKey', 'api_key', 'token', 'password', 'prompt', 'messages', 'input']);

function isContainer(value: unknown): value is Record<string, unknown> | unknown[] {
  return value !== null && typeof value === 'object';
}

function censorOneLevel(value: Record<string, unknown> | unknown[]): Record<string, unknown> | unknown[] {
  if (Array.isArray(value)) return value;
  let copy: Record<string, unknown> | null = null;
  for (const key in value) {
    if (!SECRET_FIELDS.has(key) || !Object.hasOwn(value, key)) continue;
    copy ??= { ...value };
    copy[key] = CENSORED;
  }
  return copy ?? value;
}

export function censorSecrets(fields: Record<string, unknown>): Record<string, unknown> {
  let out: Record<string, unknown> | null = null;
  for (const key in fields) {
    if (!Object.hasOwn(fields, key)) continue;
    const value = fields[key];
    let censored: unknown = value;
    if (SECRET_FIELDS.has(key)) censored = CENSORED;
    else if (isContainer(value) && !(value instanceof Error)) censored = censorOneLevel(value);
    if (censored !== value) {
      out ??= { ...fields };
      out[key] = censored;
    }
  }
  return out ?? fields;
}
