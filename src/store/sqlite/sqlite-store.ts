import type { Clock } from '../../core/clock.js';
import type { Store } from '../types.js';
import { SqliteConnection, openSqliteDatabase } from './database.js';
import { SqliteKeyStore } from './keys.js';
import { SqliteLedgerStore } from './ledger.js';
import { migrate } from './migrations.js';
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
 */
export function createSqliteStore(options: SqliteStoreOptions): Store {
  const conn = new SqliteConnection(openSqliteDatabase(options.path));
  let closed = false;
  return {
    keys: new SqliteKeyStore(conn, options.clock),
    ledger: new SqliteLedgerStore(conn, options.clock),
    usage: new SqliteUsageStore(conn),
    async migrate() {
      migrate(conn, options.clock);
    },
    async serverTime() {
      // The database lives in this process: its clock is the gateway's own.
      return Date.now();
    },
    async close() {
      // Idempotent so shutdown paths (signal handler + finally) can both call it.
      if (closed) return;
      closed = true;
      conn.close();
    },
  };
}
