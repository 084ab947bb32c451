import type { Clock } from '../../core/clock.js';
import { type AppliedMigration, type Migration, checkHistory } from '../migration-history.js';
import type { SqliteConnection } from './database.js';
import { schemaV1 } from './schema-v1.js';
import { schemaV2 } from './schema-v2.js';
import { schemaV3 } from './schema-v3.js';
import { schemaV4 } from './schema-v4.js';
import { schemaV5 } from './schema-v5.js';
import { schemaV6 } from './schema-v6.js';
import { schemaV7 } from './schema-v7.js';
import { schemaV8 } from './schema-v8.js';
import { schemaV9 } from './schema-v9.js';
import { schemaV10 } from './schema-v10.js';
import { schemaV11 } from './schema-v11.js';

export type { Migration } from '../migration-history.js';

/** Ordered and append-only (src/store/migration-history.ts): a change is a new entry, never an edit. */
export const migrations: readonly Migration[] = [
  { version: 1, name: 'initial_ledger', sql: schemaV1 },
  { version: 2, name: 'journal_expire', sql: schemaV2 },
  { version: 3, name: 'usage_shortfall_idempotency', sql: schemaV3 },
  { version: 4, name: 'key_rate_limits', sql: schemaV4 },
  { version: 5, name: 'key_families', sql: schemaV5 },
  { version: 6, name: 'usage_token_details', sql: schemaV6 },
  { version: 7, name: 'stored_responses', sql: schemaV7 },
  { version: 8, name: 'usage_events_by_time', sql: schemaV8 },
  { version: 9, name: 'drop_unread_indexes', sql: schemaV9 },
  { version: 10, name: 'pending_holds_cover_amount', sql: schemaV10 },
  { version: 11, name: 'reaper_walks_pending_by_owner', sql: schemaV11 },
];

/**
 * Applies pending migrations in one IMMEDIATE transaction, so two processes starting together cannot both
 * apply the same version (the second waits, then finds nothing to do).
 */
export function migrate(conn: SqliteConnection, clock: Clock, list: readonly Migration[] = migrations): number[] {
  return conn.immediate(() => {
    conn.db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version     INTEGER PRIMARY KEY,
      name        TEXT NOT NULL,
      applied_at  INTEGER NOT NULL
    )`);
    // Read through a one-off statement: the cache must not hold statements prepared against an older schema.
    const applied = conn.db.prepare('SELECT version, name FROM schema_migrations ORDER BY version').all() as AppliedMigration[];
    checkHistory(applied, list);
    const done = new Set(applied.map((row) => row.version));
    const insert = conn.db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
    const newlyApplied: number[] = [];
    for (const migration of [...list].sort((a, b) => a.version - b.version)) {
      if (done.has(migration.version)) continue;
      conn.db.exec(migration.sql);
      insert.run(migration.version, migration.name, clock.now());
      newlyApplied.push(migration.version);
    }
    return newlyApplied;
  });
}
