/**
 * Starts the gateway on Node: opens the store (migrations applied), builds the routing table from the
 * configuration, serves the app and runs the hold reaper. Used by `svc-gateway serve` and by the tests,
 * which start it on an ephemeral port.
 */
import { getRequestListener } from '@hono/node-server';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CompletionRegistry } from '../../completions/registry.js';
import { createApp, type Doors } from '../../core/app.js';
import { limitsFromConfig } from '../../core/limits.js';
import { buildEmbeddingRoutes } from '../../embeddings/embedding-routes.js';
import { directDoors } from './direct-doors.js';
import { withWriteDeadline } from './write-deadline.js';
import { DeadlineHeap } from '../../core/deadline-heap.js';
import { useDeadlineScheduler } from '../../core/deadline-timers.js';
import { AlignedClock } from '../../core/aligned-clock.js';
import type { Clock } from '../../core/clock.js';
import type { AppDeps } from '../../core/deps.js';
import { MonotonicClock } from '../../core/monotonic-clock.js';
import type { Logger } from '../../core/logger.js';
import { ConfigError, type GatewayConfig } from '../../config/schema.js';
import { adminTokenProblem } from '../../http/middleware/admin-auth.js';
import { buildRoutingTable, type ProviderSecrets } from '../../providers/registry.js';
import { createNodeUpstreamClient } from './upstream-client.js';
import { instrumentLedger } from '../../observability/instrumented-ledger.js';
import type { TargetHealth } from '../../routing/health.js';
import { prometheusTelemetry } from './prometheus-telemetry.js';
import { propagatingHttp, type NodeTracing } from './tracing.js';
import type { Store } from '../../store/types.js';
import { describeDatabase, openStore } from './open-store.js';
import { RedisRateLimiter } from '../../ratelimit/redis-limiter.js';
import { InProcessRateLimiter } from '../../ratelimit/sliding-window.js';
import type { RateLimiter } from '../../ratelimit/rate-limiter.js';
import { ReapIncomplete, reapIncompleteLine } from '../../store/reap-isolated.js';

/** Machine clocks drift by milliseconds per hour at most; once a minute keeps instances within a few ms. */
const CLOCK_ALIGN_INTERVAL_MS = 60_000;

/** After the grace period: how long interrupted completions get to settle, then to write their last frames. */
const SHUTDOWN_SETTLE_MS = 10_000;
const SHUTDOWN_FLUSH_MS = 2_000;

/** The process's deadlines, one heap for every gateway it runs (src/core/deadline-timers.ts). */
const processDeadlines = new DeadlineHeap();

export interface GatewayOptions {
  config: GatewayConfig;
  secrets: ProviderSecrets;
  /** SVC_DATABASE_URL; unset means the embedded SQLite file. */
  databaseUrl?: string;
  port: number;
  host?: string;
  clock?: Clock;
  logger: Logger;
  /** SVC_ADMIN_HOST / SVC_ADMIN_PORT: serve /admin/v1 only there (port 0: any free port), not on the public listener. */
  adminListener?: { host: string; port: number };
  /** SVC_ADMIN_TOKEN; unset disables the admin API. */
  adminToken?: string | null;
  /** SVC_REDIS_URL, else rate_limits.redis_url: rate limits shared by every instance; unset: in this process. */
  redisUrl?: string;
  /** SVC_METRICS_TOKEN: the bearer token GET /metrics asks for; unset: none. */
  metricsToken?: string | null;
  /** OpenTelemetry tracing (./tracing.ts), when an OTLP endpoint is configured; shut down with the gateway. */
  tracing?: NodeTracing | null;
}

export interface RunningGateway {
  /** Base URL of the OpenAI-compatible API, ending in /v1. */
  url: string;
  port: number;
  store: Store;
  /** Base URL of the operator API when it has a listener of its own (`.../admin/v1`). */
  adminUrl?: string;
  /** The completions in flight in this process. */
  completions: CompletionRegistry;
  /**
   * Graceful shutdown (SIGTERM): stop accepting, let in-flight completions finish for up to `graceMs`
   * (default: server.shutdown_grace_ms), end the rest with an explicit error and settle every hold, then
   * close the connections, the upstream pool and the store. Resolves with the number of completions whose
   * hold could not be ended (0 unless the ledger was unreachable; their leases run out and the reaper voids them).
   */
  shutdown(graceMs?: number): Promise<number>;
  /** shutdown(0): in-flight completions are ended at once (and still settled). */
  close(): Promise<void>;
}

export async function startGateway(opts: GatewayOptions): Promise<RunningGateway> {
  const tokenProblem = opts.adminToken ? adminTokenProblem(opts.adminToken) : null;
  if (tokenProblem !== null) throw new ConfigError(tokenProblem);
  useDeadlineScheduler(processDeadlines.schedule);
  // Unless a test injects its own clock: on PostgreSQL, the database's time, which also judges leases and
  // expiry inside its statements; on SQLite, this machine's monotonic clock anchored at start. A step of the
  // machine's wall clock moves neither (docs/ledger.md, "Time").
  const aligned = describeDatabase(opts.databaseUrl).kind === 'postgres' ? new AlignedClock() : null;
  const clock = opts.clock ?? aligned ?? new MonotonicClock();
  const store = await openStore(opts.databaseUrl, clock);
  // From here on, a start that fails (a port in use, a Redis URL the client refuses, a database clock that
  // does not answer) closes what it opened, newest first: left open, the store's connections, its
  // checkpointer and the upstream pool would keep the process alive, and an orchestrator would see a hung
  // start instead of a failed one.
  const opened: (() => Promise<unknown>)[] = [() => store.close()];
  const orUndo = async <T>(step: Promise<T>): Promise<T> => {
    try {
      return await step;
    } catch (error) {
      for (const close of opened.reverse()) await close().catch(() => undefined);
      throw error;
    }
  };
  const align = async (): Promise<void> => {
    await aligned?.align(() => store.serverTime());
  };
  if (!opts.clock) await orUndo(align());
  const { server: serverCfg } = opts.config;
  const upstream = createNodeUpstreamClient();
  opened.push(() => upstream.close());
  const tracing = opts.tracing ?? null;
  // With tracing on, every upstream call carries the attempt span's `traceparent`.
  const upstreamHttp = tracing === null ? upstream.http : propagatingHttp(upstream.http);
  let health: ReadonlyMap<string, TargetHealth> = new Map();
  const telemetry = prometheusTelemetry({ health: () => health, tracing });
  const completions = new CompletionRegistry();
  const rateCfg = opts.config.rate_limits;
  const redisUrl = opts.redisUrl ?? rateCfg.redis_url;
  let limiter: RateLimiter = new InProcessRateLimiter(clock);
  if (redisUrl !== undefined) {
    // The Redis client is loaded only when limits are shared: the default keeps them in this process.
    const { connectRateLimitRedis } = await import('./redis-client.js');
    const redis = await orUndo(connectRateLimitRedis(redisUrl, { timeoutMs: rateCfg.redis_timeout_ms, logger: opts.logger }));
    limiter = new RedisRateLimiter(redis, {
      onError: rateCfg.on_redis_error,
      logger: opts.logger,
      fallback: limiter,
      onFallback: (policy) => telemetry.rateLimiterFallback(policy),
    });
  }
  const routing = buildRoutingTable(opts.config, opts.secrets, upstreamHttp);
  health = routing.health;
  const deps: AppDeps = {
    store: { ...store, ledger: instrumentLedger(store.ledger, telemetry.ledgerCall) },
    clock,
    routing,
    embeddings: buildEmbeddingRoutes(opts.config, opts.secrets, upstreamHttp),
    telemetry,
    metrics: telemetry.exposition,
    metricsToken: opts.metricsToken ?? null,
    logger: opts.logger,
    adminToken: opts.adminToken ?? null,
    limits: limitsFromConfig(opts.config),
    completions,
    rateLimiting: { limiter, defaults: { rpm: rateCfg.rpm, tpm: rateCfg.tpm } },
  };
  const host = opts.host ?? '127.0.0.1';
  const http = serverCfg.http;
  const listen = (listener: RequestListener, hostname: string, listenPort: number): Promise<Server> =>
    new Promise<Server>((resolve, reject) => {
      const s = createServer(
        {
          // Slow clients (slowloris headers or bodies) are cut at these bounds; Node checks them on an interval,
          // set here to a fraction of the shortest so a bound is kept within a second or so.
          headersTimeout: http.headers_timeout_ms,
          requestTimeout: http.receive_timeout_ms,
          keepAliveTimeout: http.keep_alive_timeout_ms,
          connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.floor(http.headers_timeout_ms / 4))),
          // A header sent twice reads as both values joined, as a Web Request's Headers give it to the app: two
          // Authorization headers are a malformed one (401) on either path, not the first one's key.
          joinDuplicateHeaders: true,
        },
        listener,
      );
      s.maxConnections = http.max_connections;
      s.once('error', reject);
      s.listen(listenPort, hostname, () => resolve(s));
    });
  // With an admin listener of its own (on a private interface), the public one serves no /admin/v1 at all.
  const separateAdmin = opts.adminListener !== undefined && opts.adminToken ? opts.adminListener : null;
  const appListener = (doors: Doors, hostname: string): RequestListener =>
    getRequestListener(withWriteDeadline(createApp(deps, doors).fetch, serverCfg.write_timeout_ms), { hostname });
  // The public listener serves the completion doors' POSTs directly on node:http (./direct-doors.ts).
  const publicListener = directDoors(deps, appListener(separateAdmin ? 'public' : 'all', host), serverCfg.write_timeout_ms);
  opened.push(() => limiter.close());
  const server = await orUndo(listen(publicListener, host, opts.port));
  opened.push(() => new Promise((resolve) => server.close(resolve)));
  const adminServer = separateAdmin ? await orUndo(listen(appListener('admin', separateAdmin.host), separateAdmin.host, separateAdmin.port)) : null;
  const port = (server.address() as AddressInfo).port;

  // A hold whose gateway died mid-request is voided once its lease runs out, so its credits come back.
  // Idempotency records past their 24 hours, and stored responses past their retention, go in the same pass.
  const reaped = (n: number): void => {
    if (n === 0) return;
    telemetry.holdsReaped(n);
    opts.logger.warn('voided expired holds (their gateway stopped renewing them)', { count: n });
  };
  let reaping = false;
  const reaper = setInterval(() => {
    // One pass at a time: a pass done hold by hold (reap-isolated.ts) over a remote database can outlast the
    // interval, and a second one would only do the same work again.
    if (!reaping) {
      reaping = true;
      store.ledger
        .reapExpiredHolds(1000)
        .then(reaped, (e: unknown) => {
          if (!(e instanceof ReapIncomplete)) {
            opts.logger.error('hold reaper failed', { error: String(e) });
            return;
          }
          reaped(e.voided);
          const line = reapIncompleteLine(e);
          opts.logger[line.level](line.msg, line.fields);
        })
        .finally(() => {
          reaping = false;
        });
    }
    store.idempotency.purgeExpired(1000).then(
      (n) => n > 0 && opts.logger.info('purged expired idempotency records', { count: n }),
      (e: unknown) => opts.logger.error('idempotency purge failed', { error: String(e) }),
    );
    store.responses.purgeExpired(1000).then(
      (n) => n > 0 && opts.logger.info('purged expired stored responses', { count: n }),
      (e: unknown) => opts.logger.error('stored response purge failed', { error: String(e) }),
    );
  }, serverCfg.reaper_interval_ms);
  reaper.unref();
  const realign = setInterval(() => {
    align().catch((e: unknown) => opts.logger.warn('clock alignment failed', { error: String(e) }));
  }, CLOCK_ALIGN_INTERVAL_MS);
  realign.unref();

  /** Waits for the HTTP server to finish its responses, destroying what is left after `ms`. */
  const closeServer = (ms: number): Promise<void> =>
    new Promise<void>((resolve) => {
      const force = setTimeout(() => server.closeAllConnections(), ms);
      server.close(() => {
        clearTimeout(force);
        resolve();
      });
      server.closeIdleConnections();
    });

  let stopping: Promise<number> | null = null;
  const shutdown = (graceMs: number = serverCfg.shutdown_grace_ms): Promise<number> => {
    stopping ??= (async () => {
      const closing = closeServer(graceMs + SHUTDOWN_SETTLE_MS + SHUTDOWN_FLUSH_MS);
      adminServer?.close();
      adminServer?.closeIdleConnections();
      // Every hold ends (settled or voided) before the store closes.
      const unsettled = await completions.drain(graceMs, SHUTDOWN_SETTLE_MS);
      if (unsettled > 0) opts.logger.error('shutdown left holds pending; the reaper will void them after their lease', { count: unsettled });
      // The ended streams' last frames are still on their way out: each connection goes as soon as its
      // response is written (a keep-alive one would otherwise wait for its client or the flush deadline).
      let flushed: ReturnType<typeof setTimeout> | undefined;
      const sweep = setInterval(() => server.closeIdleConnections(), 20);
      server.closeIdleConnections();
      await Promise.race([closing, new Promise((resolve) => (flushed = setTimeout(resolve, SHUTDOWN_FLUSH_MS)))]);
      clearInterval(sweep);
      clearTimeout(flushed);
      server.closeAllConnections();
      adminServer?.closeAllConnections();
      await closing;
      clearInterval(reaper);
      clearInterval(realign);
      await upstream.close();
      await limiter.close();
      await store.close();
      await tracing?.shutdown().catch((e: unknown) => opts.logger.warn('trace export failed at shutdown', { error: String(e) }));
      return unsettled;
    })();
    return stopping;
  };

  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}/v1`,
    port,
    ...(adminServer ? { adminUrl: `http://${separateAdmin?.host.includes(':') ? `[${separateAdmin.host}]` : separateAdmin?.host}:${(adminServer.address() as AddressInfo).port}/admin/v1` } : {}),
    store,
    completions,
    shutdown,
    async close() {
      await shutdown(0);
    },
  };
}
