import type { Clock } from '../../core/clock.js';
import type { Store } from '../types.js';
import { type Checkpointer, SAFETY_AUTOCHECKPOINT_PAGES, startCheckpointer } from './checkpointer.js';
import { BUSY_TIMEOUT_MS, SqliteConnection, openSqliteDatabase } from './database.js';
import { SqliteIdempotencyStore } from './idempotency.js';
import { SqliteKeyStore } from './keys.js';
import { SqliteLedgerStore } from './ledger.js';
import { migrate } from './migrations.js';
import { SqliteResponseStore } from './responses.js';
import { SqliteUsageStore } from './usage.js';

export interface SqliteStoreOptions {
  /** A database file (its parent directory must exist) or ':memory:'. */
  path: string;
  clock: Clock;
}

/**
 * The embedded Store. The driver is synchronous, so each method does its work inside one synchronous
 * transaction; the async signatures exist for the PostgreSQL implementation behind the same interface.
 * Call migrate() before anything else: statements are prepared on first use, against the migrated schema.
 * A file-backed store checkpoints its WAL on a worker thread from then on (checkpointer.ts).
 */
export function createSqliteStore(options: SqliteStoreOptions): Store {
  const conn = new SqliteConnection(openSqliteDatabase(options.path));
  let closed = false;
  let checkpointer: Checkpointer | null = null;
  return {
    keys: new SqliteKeyStore(conn, options.clock),
    ledger: new SqliteLedgerStore(conn, options.clock),
    usage: new SqliteUsageStore(conn),
    idempotency: new SqliteIdempotencyStore(conn, options.clock),
    responses: new SqliteResponseStore(conn, options.clock),
    async migrate() {
      migrate(conn, options.clock);
      // After the first migration, so the file exists and is in WAL mode when the second connection opens it.
      if (checkpointer === null && options.path !== ':memory:') {
        conn.db.pragma(`wal_autocheckpoint = ${SAFETY_AUTOCHECKPOINT_PAGES}`);
        checkpointer = startCheckpointer(options.path, BUSY_TIMEOUT_MS, (message) => process.emitWarning(message, 'SvcGatewayWarning'));
      }
    },
    async serverTime() {
      // The database lives in this process: its clock is the gateway's own.
      return Date.now();
    },
    async close() {
      // Idempotent so shutdown paths (signal handler + finally) can both call it.
      if (closed) return;
      closed = true;
      await checkpointer?.stop();
      conn.close();
    },
  };
}
