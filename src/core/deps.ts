import type { EmbeddingRoutes } from '../embeddings/embedding-routes.js';
import type { CompletionLimits } from '../completions/completion.js';
import type { CompletionRegistry } from '../completions/registry.js';
import type { RateLimiting } from '../ratelimit/admit.js';
import type { RoutingTable } from '../routing/router.js';
import type { Store } from '../store/types.js';
import type { Clock } from './clock.js';
import type { Logger } from './logger.js';
import type { RequestObservation } from '../observability/request-observation.js';
import type { MetricsExposition, Telemetry } from '../observability/telemetry.js';

/** What createApp needs. Nothing below the runtime entry point reads the environment or the filesystem. */
export interface AppDeps {
  store: Store;
  clock: Clock;
  routing: RoutingTable;
  logger: Logger;
  /** Bearer token of the operator API (/admin/v1); null disables that API. */
  adminToken: string | null;
  limits: CompletionLimits & {
    maxBodyBytes: number;
    /** Delay added per recent failed admin-token attempt (src/http/middleware/admin-auth.ts); 0: none. */
    adminFailureDelayMs: number;
    /** `limits.media_url_max_tokens`: tokens held for a media URL of unknowable size; null refuses it (400). */
    mediaUrlMaxTokens: number | null;
    /** Active keys an account may hold before the public API creates no more (`limits.max_api_keys_per_account`). */
    maxApiKeysPerAccount: number;
    /** `server.strict_params`: refuse (400) a parameter the serving target cannot take, rather than drop it. */
    strictParams?: boolean;
    /** `server.cors_origins`; absent: any origin (`*`), empty: CORS off. */
    corsOrigins?: readonly string[];
    /** `server.responses_retention_days` in ms: how long stored Responses answers are kept; 0 or absent: not kept. */
    responsesRetentionMs?: number;
  };
  /** The embedding aliases (`embeddings:` in the config); absent or empty: /v1/embeddings serves none. */
  embeddings?: EmbeddingRoutes;
  /** The completions alive in this process; the runtime drains it on shutdown. */
  completions: CompletionRegistry;
  /** Per-key rate limits (src/ratelimit/): in process, or shared through Redis. */
  rateLimiting: RateLimiting;
  /** Metrics and traces (src/observability/); absent: nothing is reported. */
  telemetry?: Telemetry;
  /** GET /metrics; absent: 404 (a runtime without a metrics registry). */
  metrics?: MetricsExposition;
  /** SVC_METRICS_TOKEN: the bearer token /metrics asks for; null or absent: none. */
  metricsToken?: string | null;
}

/**
 * What a runtime may pass along with each request. The Node server (@hono/node-server) passes the
 * response object, whose `destroy` cuts a client connection that stopped reading; runtimes without it
 * (Workers) apply their own backpressure limits.
 */
export interface RuntimeBindings {
  outgoing?: { destroy(error?: Error): void };
}

export interface AppEnv {
  Bindings: RuntimeBindings | undefined;
  Variables: {
    deps: AppDeps;
    requestId: string;
    key: import('../store/types.js').ApiKeyRecord;
    observation: RequestObservation | undefined;
  };
}
