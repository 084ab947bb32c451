import type { RoutingTable } from '../routing/router.js';
import type { Store } from '../store/types.js';
import type { Clock } from './clock.js';
import type { Logger } from './logger.js';

/** What createApp needs. Nothing below the runtime entry point reads the environment or the filesystem. */
export interface AppDeps {
  store: Store;
  clock: Clock;
  routing: RoutingTable;
  logger: Logger;
  /** Bearer token of the operator API (/admin/v1); null disables that API. */
  adminToken: string | null;
  limits: {
    maxBodyBytes: number;
    /** Lifetime of a credit hold before the reaper may void it; longer than any upstream call. */
    holdLeaseMs: number;
    /** The longest a chat completion may run, across failover attempts; shorter than the lease. */
    requestTimeoutMs: number;
    /** Silence after which a stream gets an SSE comment. */
    keepaliveMs: number;
  };
}

export interface AppEnv {
  Variables: {
    deps: AppDeps;
    requestId: string;
    key: import('../store/types.js').ApiKeyRecord;
  };
}
