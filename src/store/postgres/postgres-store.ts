import type { Clock } from '../../core/clock.js';
import type { Store } from '../types.js';
import { openPool } from './database.js';
import { guard } from './errors.js';
import { PostgresIdempotencyStore } from './idempotency.js';
import { PostgresKeyStore } from './keys.js';
import { PostgresLedgerStore } from './ledger.js';
import { migrate } from './migrations.js';
import { PostgresResponseStore } from './responses.js';
import { PostgresUsageStore } from './usage.js';

/** Connections per store (per gateway process). Each in-flight reserve or settle holds one briefly. */
export const DEFAULT_POOL_SIZE = 10;

export interface PostgresStoreOptions {
  /** `postgres://user:password@host:port/database`; the driver reads sslmode and friends from it. */
  url: string;
  clock: Clock;
  /** Schema holding the tables (created by migrate() if missing); the connection's default if omitted. */
  schema?: string;
  /** Pool size, default DEFAULT_POOL_SIZE. */
  max?: number;
}

/**
 * The Store for many gateway processes on one database. Connections open lazily, so creating the store
 * does not touch the server; call migrate() before anything else (every instance may: it is serialized by
 * an advisory lock). Several processes share the books through row locks, see docs/ledger.md.
 */
export function createPostgresStore(options: PostgresStoreOptions): Store {
  const schema = options.schema ?? null;
  const sql = openPool(options.url, { schema, max: options.max ?? DEFAULT_POOL_SIZE });
  let closing: Promise<void> | undefined;
  return {
    keys: new PostgresKeyStore(sql, options.clock),
    ledger: new PostgresLedgerStore(sql, options.clock),
    usage: new PostgresUsageStore(sql),
    idempotency: new PostgresIdempotencyStore(sql, options.clock),
    responses: new PostgresResponseStore(sql, options.clock),
    async migrate() {
      await guard(() => migrate(sql, options.clock, schema));
    },
    async serverTime() {
      // clock_timestamp(), not now(): now() is frozen at the start of a transaction.
      const [row] = await guard(() => sql<{ ms: number }[]>`SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS ms`);
      return Number(row?.ms);
    },
    async close() {
      // Idempotent so shutdown paths (signal handler + finally) can both call it; in-flight queries finish
      // for up to 5 s before their connections are closed.
      closing ??= sql.end({ timeout: 5 });
      await closing;
    },
  };
}
