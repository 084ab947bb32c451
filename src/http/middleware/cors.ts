/**
 * CORS for the public API (hono's middleware), so that a browser page can call the gateway with a key:
 * preflights are answered without one, and the headers OpenAI clients read (request id, rate limits,
 * retry hints, dropped parameters) are exposed to scripts.
 */
import type { MiddlewareHandler } from 'hono';
import { cors } from 'hono/cors';
import type { AppEnv } from '../../core/deps.js';
import { DROPPED_PARAMS_HEADER } from '../../providers/target-params.js';

const EXPOSED = [
  'x-request-id',
  'retry-after',
  'retry-after-ms',
  'x-should-retry',
  'x-ratelimit-limit-requests',
  'x-ratelimit-remaining-requests',
  'x-ratelimit-reset-requests',
  'x-ratelimit-limit-tokens',
  'x-ratelimit-remaining-tokens',
  'x-ratelimit-reset-tokens',
  'idempotent-replayed',
  DROPPED_PARAMS_HEADER,
];

/** Null when the operator allows no origin (`server.cors_origins: []`). */
export function publicCors(origins: readonly string[]): MiddlewareHandler<AppEnv> | null {
  if (origins.length === 0) return null;
  const handler = cors({
    origin: origins.includes('*') ? '*' : [...origins],
    allowMethods: ['GET', 'POST', 'DELETE', 'OPTIONS'],
    // Unset: the browser's Access-Control-Request-Headers is echoed, so SDKs' own headers (x-stainless-*) pass.
    exposeHeaders: EXPOSED,
    maxAge: 600,
  });
  // Only browsers send Origin: server-side clients (most traffic) skip the headers they would never read.
  return (c, next) => (c.req.header('origin') === undefined ? next() : handler(c, next));
}
