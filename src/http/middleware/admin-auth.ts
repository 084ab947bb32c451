/**
 * Operator authentication for /admin/v1: a bearer token from the environment (SVC_ADMIN_TOKEN). Without a
 * configured token the admin API does not exist (404), so a default install exposes no operator surface.
 */
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../../core/deps.js';
import { GatewayError, unauthorized } from '../../openai/errors.js';

const encoder = new TextEncoder();

/** Compares digests, not the tokens, so the comparison time says nothing about the token. */
async function sameSecret(a: string, b: string): Promise<boolean> {
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

export const adminAuth: MiddlewareHandler<AppEnv> = async (c, next) => {
  const token = c.get('deps').adminToken;
  if (!token) {
    throw new GatewayError(404, 'not_found_error', 'unknown_endpoint', 'The admin API is disabled: set SVC_ADMIN_TOKEN to enable it.');
  }
  const match = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header('authorization') ?? '');
  if (!match || !(await sameSecret(match[1] as string, token))) {
    throw unauthorized('invalid_api_key', 'Invalid operator token for the admin API.');
  }
  await next();
};
