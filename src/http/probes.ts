/**
 * GET /readyz (whether this instance should receive traffic) and GET /metrics (Prometheus). No API key:
 * orchestrators and scrapers have none; /metrics asks for SVC_METRICS_TOKEN when one is set. /readyz is on
 * every listener (load balancers probe the public one); /metrics on the admin listener when there is one
 * (src/core/app.ts), so usage figures never face the internet there.
 */
import { Hono } from 'hono';
import type { AppEnv } from '../core/deps.js';
import { GatewayError, unauthorized } from '../openai/errors.js';
import { checkReadiness } from '../observability/readiness.js';
import { sameSecret } from './middleware/admin-auth.js';

export const readinessRoutes = new Hono<AppEnv>().get('/readyz', async (c) => {
  const { store, completions } = c.get('deps');
  const r = await checkReadiness(store, completions);
  return c.json({ status: r.ready ? 'ready' : 'not_ready', checks: r.checks }, r.ready ? 200 : 503);
});

export const metricsRoutes = new Hono<AppEnv>().get('/metrics', async (c) => {
  const { metrics, metricsToken } = c.get('deps');
  if (!metrics) throw new GatewayError(404, 'not_found_error', 'unknown_endpoint', 'Metrics are not enabled in this runtime.');
  if (metricsToken) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header('authorization') ?? '');
    if (!match || !(await sameSecret(match[1] as string, metricsToken))) throw unauthorized('invalid_api_key', 'Invalid metrics token.');
  }
  return c.body(await metrics.render(), 200, { 'content-type': metrics.contentType });
});
