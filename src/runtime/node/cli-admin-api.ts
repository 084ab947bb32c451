/**
 * The operator commands against a running gateway's admin API (`/admin/v1`) instead of its database: for a
 * deployment whose database the operator's machine does not reach (a Worker behind Hyperdrive, a gateway in a
 * private network). `--url` (or SVC_ADMIN_URL) names the gateway, SVC_ADMIN_TOKEN authenticates; the token
 * is never a flag, so it stays out of shell history and process lists.
 */
import { CliError } from './cli-output.js';

export interface AdminApi {
  call(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown, headers?: Record<string, string>): Promise<Record<string, unknown>>;
}

/** The admin API named by `--url` or SVC_ADMIN_URL; null when neither is set (the commands use the database). */
export function adminApiFrom(url: string | undefined, token: string | undefined, fetchImpl: typeof fetch = fetch): AdminApi | null {
  if (url === undefined || url === '') return null;
  let base: URL;
  try {
    base = new URL(url);
  } catch {
    throw new CliError(`--url must be the gateway's URL (https://gateway.example.com), got '${url}'`, 2);
  }
  if (base.protocol !== 'https:' && base.protocol !== 'http:') throw new CliError(`--url must be http(s), got '${url}'`, 2);
  if (token === undefined || token === '') throw new CliError('set SVC_ADMIN_TOKEN to the gateway\'s operator token to use --url', 2);
  // The gateway's origin, or its /v1 or /admin/v1 URL: the admin API is under /admin/v1 of the origin.
  const prefix = base.pathname.replace(/\/+$/, '').replace(/\/(admin\/)?v1$/, '') + '/admin/v1';
  return {
    async call(method, path, body, headers = {}) {
      const target = new URL(prefix + path, base);
      let res: Response;
      try {
        res = await fetchImpl(target, {
          method,
          headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
      } catch (e) {
        throw new CliError(`could not reach ${target.origin}: ${e instanceof Error ? (e.cause instanceof Error ? e.cause.message : e.message) : String(e)}`);
      }
      const text = await res.text();
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        throw new CliError(`${method} ${target.pathname}: HTTP ${res.status}, not JSON: ${text.slice(0, 200)}`);
      }
      if (!res.ok) {
        const error = typeof parsed === 'object' && parsed !== null && 'error' in parsed ? (parsed.error as { message?: unknown; code?: unknown }) : null;
        if (res.status === 404 && error?.code === 'unknown_endpoint') {
          throw new CliError(`${target.origin} serves no admin API (is SVC_ADMIN_TOKEN set on the gateway?)`);
        }
        throw new CliError(`${method} ${target.pathname}: HTTP ${res.status}${error ? ` ${String(error.code)}: ${String(error.message)}` : ''}`);
      }
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new CliError(`${method} ${target.pathname}: unexpected answer`);
      return parsed as Record<string, unknown>;
    },
  };
}
