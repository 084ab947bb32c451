/**
 * The operator commands against a running gateway's admin API (`/admin/v1`) instead of its database: for a
 * deployment whose database the operator's machine does not reach (a Worker behind Hyperdrive, a gateway in a
 * private network). `--url` (or SVC_ADMIN_URL) names the gateway, SVC_ADMIN_TOKEN authenticates; the token
 * is never a flag, so it stays out of shell history and process lists.
 */
import { CliError } from './cli-output.js';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);
/** An admin call that has not answered by then is reported, not waited on forever. */
const CALL_TIMEOUT_MS = 30_000;

export interface AdminApi {
  call(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown, headers?: Record<string, string>): Promise<Record<string, unknown>>;
}

/** The admin API named by `--url` or SVC_ADMIN_URL; null when neither is set (the commands use the database). */
/** An id as one path segment: '.' and '..' would be resolved away by the URL, naming another route. */
export function pathSegment(id: string): string {
  if (id === '' || id === '.' || id === '..') throw new CliError(`not an id: '${id}'`, 2);
  return encodeURIComponent(id);
}

export function adminApiFrom(url: string | undefined, token: string | undefined, fetchImpl: typeof fetch = fetch): AdminApi | null {
  if (url === undefined || url === '') return null;
  let base: URL;
  try {
    base = new URL(url);
  } catch {
    throw new CliError(`--url must be the gateway's URL (https://gateway.example.com), got '${url}'`, 2);
  }
  if (base.protocol !== 'https:' && base.protocol !== 'http:') throw new CliError(`--url must be http(s), got '${url}'`, 2);
  // The token goes in every request: in clear only to this machine.
  if (base.protocol === 'http:' && !LOOPBACK.has(base.hostname)) {
    throw new CliError(`--url must be https (the operator token would cross the network in clear), got '${url}'`, 2);
  }
  if (token === undefined || token === '') throw new CliError('set SVC_ADMIN_TOKEN to the gateway\'s operator token to use --url', 2);
  // The gateway's origin, or its /v1 or /admin/v1 URL: the admin API is under /admin/v1 of the origin.
  const prefix = base.pathname.replace(/\/+$/, '').replace(/\/(admin\/)?v1$/, '') + '/admin/v1';
  return {
    async call(method, path, body, headers = {}) {
      const target = new URL(prefix + path, base);
      const redact = (text: string): string => text.replaceAll(token, '[SVC_ADMIN_TOKEN]');
      let res: Response;
      let text: string;
      try {
        res = await fetchImpl(target, {
          method,
          headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          // A redirect could carry the body (and, to the same origin, the token) somewhere not named.
          redirect: 'error',
          signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
        });
        text = await res.text();
      } catch (e) {
        const why = e instanceof Error ? (e.cause instanceof Error ? e.cause.message : e.message) : String(e);
        throw new CliError(redact(`${method} ${target.origin}${target.pathname}: no answer (${why})`));
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        throw new CliError(redact(`${method} ${target.pathname}: HTTP ${res.status}, not JSON: ${text.slice(0, 200)}`));
      }
      if (!res.ok) {
        const error = typeof parsed === 'object' && parsed !== null && 'error' in parsed ? (parsed.error as { message?: unknown; code?: unknown }) : null;
        if (res.status === 404 && error?.code === 'unknown_endpoint') {
          throw new CliError(`${target.origin} serves no admin API (is SVC_ADMIN_TOKEN set on the gateway?)`);
        }
        throw new CliError(redact(`${method} ${target.pathname}: HTTP ${res.status}${error ? ` ${String(error.code)}: ${String(error.message)}` : ''}`));
      }
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new CliError(`${method} ${target.pathname}: unexpected answer`);
      return parsed as Record<string, unknown>;
    },
  };
}
