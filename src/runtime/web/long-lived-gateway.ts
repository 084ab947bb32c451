/**
 * The gateway as a long-lived process on a runtime that serves Web `fetch` handlers itself (Deno, Bun): one
 * PostgreSQL pool for every request (the SQLite store is a Node addon), migrations applied at start, and a
 * timer doing what the Node server's reaper does. The entries (src/runtime/deno/, src/runtime/bun/) only
 * read their environment, serve and catch signals.
 */
import { systemClock } from '../../core/clock.js';
import { createApp } from '../../core/app.js';
import type { GatewayConfig } from '../../config/schema.js';
import type { Logger } from '../../core/logger.js';
import { postgresStoreFromUrl } from '../../store/postgres/store-from-url.js';
import { configFromEnv, housekeeping, loggerFromEnv, webDeps, type WebEnv } from './web-deps.js';

export interface LongLivedGateway {
  fetch(request: Request): Response | Promise<Response>;
  config: GatewayConfig;
  logger: Logger;
  /**
   * Graceful stop, as the Node server's: live completions may finish for `server.shutdown_grace_ms`, then
   * are ended; every hold is settled or voided before the store closes. Resolves with the holds left open.
   */
  stop(): Promise<number>;
}

export async function startLongLivedGateway(env: WebEnv): Promise<LongLivedGateway> {
  const url = env.SVC_DATABASE_URL;
  if (typeof url !== 'string' || url === '') throw new Error('no database: set SVC_DATABASE_URL to the PostgreSQL database');
  const config = configFromEnv(env);
  const logger = loggerFromEnv(env);
  const deps = webDeps(config, env, logger);
  const store = postgresStoreFromUrl(url, systemClock);
  await store.migrate();
  const app = createApp({ ...deps, store });
  const timer = setInterval(() => {
    housekeeping(store, logger).catch((e: unknown) => logger.error('housekeeping failed', { error: String(e) }));
  }, config.server.reaper_interval_ms);
  return {
    fetch: (request) => app.fetch(request),
    config,
    logger,
    async stop() {
      clearInterval(timer);
      const unsettled = await deps.completions.drain(config.server.shutdown_grace_ms, 2_000);
      await store.close();
      return unsettled;
    },
  };
}
