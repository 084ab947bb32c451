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

/** A plain object of fields; arrays and errors are logged as they are (pino serializes errors itself). */
function isFields(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Error);
}

/** `fields` with every secret-named own field censored; `fields` itself when it has none. */
function censorNames(fields: Record<string, unknown>, deeper: boolean): Record<string, unknown> {
  let out: Record<string, unknown> | null = null;
  for (const key in fields) {
    if (!Object.hasOwn(fields, key)) continue;
    const value = fields[key];
    const censored = SECRET_FIELDS.has(key) ? CENSORED : deeper && isFields(value) ? censorNames(value, false) : value;
    if (censored !== value) {
      out ??= { ...fields };
      out[key] = censored;
    }
  }
  return out ?? fields;
}

export function censorSecrets(fields: Record<string, unknown>): Record<string, unknown> {
  return censorNames(fields, true);
}
