/**
 * What the runtimes without Node's server (Cloudflare Workers, Deno, Bun) build the app from: the config
 * from an environment binding, a JSON console logger, and every dependency but the store, which each runtime
 * opens its own way (per request on Workers, one pool on Deno and Bun).
 */
import { systemClock } from '../../core/clock.js';
import type { AppDeps } from '../../core/deps.js';
import { limitsFromConfig } from '../../core/limits.js';
import { silentLogger, type Logger } from '../../core/logger.js';
import { CompletionRegistry } from '../../completions/registry.js';
import { DEFAULT_CONFIG, parseConfig, type GatewayConfig } from '../../config/schema.js';
import { providerSecrets } from '../../config/provider-secrets.js';
import { buildEmbeddingRoutes } from '../../embeddings/embedding-routes.js';
import { adminTokenProblem } from '../../http/middleware/admin-auth.js';
import { buildRoutingTable } from '../../providers/registry.js';
import { httpOverFetch } from '../../providers/upstream-http.js';
import { InProcessRateLimiter } from '../../ratelimit/sliding-window.js';
import { ReapIncomplete, reapIncompleteLine } from '../../store/reap-isolated.js';
import type { Store } from '../../store/types.js';

export type WebEnv = Record<string, unknown>;

/** `SVC_CONFIG`: the config file's content as JSON text or a JSON value; absent: the built-in sandbox catalog. */
export function configFromEnv(env: WebEnv): GatewayConfig {
  const raw = env.SVC_CONFIG;
  if (raw === undefined || raw === '') return parseConfig(DEFAULT_CONFIG);
  return parseConfig(typeof raw === 'string' ? JSON.parse(raw) : raw);
}

/** One JSON line per entry, at `SVC_LOG_LEVEL` (debug, info, warn, error; off: nothing) and above. */
export function loggerFromEnv(env: WebEnv): Logger {
  const level = typeof env.SVC_LOG_LEVEL === 'string' ? env.SVC_LOG_LEVEL : undefined;
  if (level === 'off') return silentLogger;
  const order = ['debug', 'info', 'warn', 'error'];
  const min = Math.max(0, order.indexOf(level ?? 'info'));
  const at = (name: string, write: (line: string) => void) => (msg: string, fields?: Record<string, unknown>) => {
    if (order.indexOf(name) >= min) write(JSON.stringify({ level: name, time: new Date().toISOString(), msg, ...fields }));
  };
  return { debug: at('debug', console.debug), info: at('info', console.log), warn: at('warn', console.warn), error: at('error', console.error) };
}

/**
 * Everything the app needs but its store. The rate limiter is in process: on Workers a key's limits hold per
 * isolate, not globally (docs/edge.md).
 */
export function webDeps(
  config: GatewayConfig,
  env: WebEnv,
  logger: Logger,
  /**
   * A short operator token would be guessable. `refuse`: throw, as the Node server refuses to start (a
   * process that can say so at start). `disable`: serve without the admin API and log why at error level, so
   * a Worker deployed with a short secret keeps serving its clients rather than failing every request.
   */
  onWeakAdminToken: 'refuse' | 'disable' = 'refuse',
): Omit<AppDeps, 'store'> {
  const secrets = providerSecrets(config, env);
  const given = env.SVC_ADMIN_TOKEN;
  let token = typeof given === 'string' && given !== '' ? given : null;
  const problem = token === null ? null : adminTokenProblem(token);
  if (problem !== null) {
    if (onWeakAdminToken === 'refuse') throw new Error(problem);
    logger.error(`admin API disabled: ${problem}`);
    token = null;
  }
  return {
    clock: systemClock,
    routing: buildRoutingTable(config, secrets, httpOverFetch(fetch)),
    embeddings: buildEmbeddingRoutes(config, secrets, httpOverFetch(fetch)),
    logger,
    adminToken: token,
    limits: limitsFromConfig(config),
    completions: new CompletionRegistry(),
    rateLimiting: { limiter: new InProcessRateLimiter(systemClock), defaults: { rpm: config.rate_limits.rpm, tpm: config.rate_limits.tpm } },
  };
}

/** How many expired holds, idempotency records and stored responses one housekeeping pass ends. */
const HOUSEKEEPING_BATCH = 1000;

/**
 * What the Node server's reaper timer does, for the other runtimes (a Cron Trigger on Workers, a timer on
 * Deno and Bun): holds whose gateway stopped renewing them are voided, expired records deleted.
 */
export async function housekeeping(store: Store, logger: Logger): Promise<void> {
  let reaped: number;
  try {
    reaped = await store.ledger.reapExpiredHolds(HOUSEKEEPING_BATCH);
  } catch (e) {
    if (!(e instanceof ReapIncomplete)) throw e;
    reaped = e.voided;
    const line = reapIncompleteLine(e);
    logger[line.level](line.msg, line.fields);
  }
  if (reaped > 0) logger.warn('voided expired holds (their gateway stopped renewing them)', { count: reaped });
  await store.idempotency.purgeExpired(HOUSEKEEPING_BATCH);
  await store.responses.purgeExpired(HOUSEKEEPING_BATCH);
}
