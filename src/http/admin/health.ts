/**
 * GET /admin/v1/health: every upstream model's breaker and latency estimate, as this instance sees them
 * (health is per process: see src/routing/health.ts).
 */
import { Hono } from 'hono';
import type { AppEnv } from '../../core/deps.js';

export const adminHealthRoutes = new Hono<AppEnv>().get('/health', (c) => {
  const { routing } = c.get('deps');
  const targets = [...routing.health.entries()].map(([target, health]) => {
    const s = health.snapshot();
    return {
      target,
      state: s.state,
      consecutive_failures: s.consecutiveFailures,
      retry_at: s.retryAt === null ? null : new Date(s.retryAt).toISOString(),
      first_token_ms: s.firstTokenMs,
      successes: s.successes,
      failures: s.failures,
    };
  });
  return c.json({ object: 'list', data: targets });
});
