/**
 * Operator authentication for /admin/v1: a bearer token from the environment (SVC_ADMIN_TOKEN). Without a
 * configured token the admin API does not exist (404), so a default install exposes no operator surface.
 */
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../../core/deps.js';
import { GatewayError, unauthorized } from '../../openai/errors.js';

const encoder = new TextEncoder();

/** Compares digests, not the tokens, so the comparison time says nothing about the token. */
export async function sameSecret(a: string, b: string): Promise<boolean> {
  const [da, db] = await Promise.all([
    crypto.subtle.digest('SHA-256', encoder.encode(a)),
    crypto.subtle.digest('SHA-256', encoder.encode(b)),
  ]);
  const x = new Uint8Array(da);
  const y = new Uint8Array(db);
  let diff = 0;
  for (let i = 0; i < x.length; i++) diff |= (x[i] as number) ^ (y[i] as number);
  return diff === 0;
}

/** The shortest operator token the gateway accepts (checked at start, src/runtime/node/server.ts). */
export const MIN_ADMIN_TOKEN_LENGTH = 32;

/** Null when the token may guard the admin API; otherwise why not. */
export function adminTokenProblem(token: string): string | null {
  if (token.length < MIN_ADMIN_TOKEN_LENGTH) {
    return `SVC_ADMIN_TOKEN must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters (it has ${token.length}); generate one with \`openssl rand -hex 32\`.`;
  }
  return null;
}

/**
 * Failed attempts in this process over the last minute slow every further failure down
 * (`server.admin_failure_delay_ms` each, 250 by default, up to 5 s): a guesser pays in time, a correct token
 * never waits. Per process, like the breakers.
 */
const FAILURE_WINDOW_MS = 60_000;
const MAX_DELAY_MS = 5_000;
/** At most this many remembered: beyond it the delay is at its maximum anyway. */
const MAX_REMEMBERED = 1_000;
const recentFailures: number[] = [];

function failureDelayMs(now: number, perFailureMs: number): number {
  while (recentFailures.length > 0 && (recentFailures[0] as number) <= now - FAILURE_WINDOW_MS) recentFailures.shift();
  recentFailures.push(now);
  if (recentFailures.length > MAX_REMEMBERED) recentFailures.shift();
  return Math.min(MAX_DELAY_MS, (recentFailures.length - 1) * perFailureMs);
}

export const adminAuth: MiddlewareHandler<AppEnv> = async (c, next) => {
  const deps = c.get('deps');
  const token = deps.adminToken;
  if (!token) {
    throw new GatewayError(404, 'not_found_error', 'unknown_endpoint', 'The admin API is disabled: set SVC_ADMIN_TOKEN to enable it.');
  }
  const match = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header('authorization') ?? '');
  if (!match || !(await sameSecret(match[1] as string, token))) {
    const delayMs = failureDelayMs(performance.now(), deps.limits.adminFailureDelayMs);
    deps.logger.warn('admin API: invalid operator token', {
      requestId: c.get('requestId'),
      path: c.req.path,
      failuresLastMinute: recentFailures.length,
      delayMs,
    });
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    throw unauthorized('invalid_api_key', 'Invalid operator token for the admin API.');
  }
  await next();
};
