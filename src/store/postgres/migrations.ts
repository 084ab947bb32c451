import type { Clock } from '../../core/clock.js';
import { type AppliedMigration, type Migration, checkHistory } from '../migration-history.js';
import { type PgSql, transaction } from './database.js';
import { installLedgerFunctions } from './ledger-functions.js';
import { schemaV1 } from './schema-v1.js';
import { schemaV2 } from './schema-v2.js';
import { schemaV3 } from './schema-v3.js';
import { schemaV4 } from './schema-v4.js';
import { schemaV5 } from './schema-v5.js';
import { schemaV6 } from './schema-v6.js';
import { schemaV7 } from './schema-v7.js';
import { schemaV8 } from './schema-v8.js';
import { schemaV9 } from './schema-v9.js';

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
];

/** First key of the two-key advisory lock; the second is the schema, so gateways in other schemas never wait. */
const MIGRATION_LOCK = 'svc-gateway:migrate';

/**
 * Applies pending migrations in one transaction under a transaction-level advisory lock: instances that
 * start together queue on the lock, the first applies, the others then find nothing to do. DDL is
 * transactional in PostgreSQL, so a failed migration leaves nothing half-applied, and the lock is released
 * by COMMIT or ROLLBACK even if the process dies. The ledger's functions are installed last (when they
 * changed), whatever the list, so a schema migrated only part of the way (as the migration tests do) still
 * serves reserves.
 */
export async function migrate(sql: PgSql, clock: Clock, schema: string | null, list: readonly Migration[] = migrations): Promise<number[]> {
  return transaction(sql, async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(hashtext(${MIGRATION_LOCK}), hashtext(COALESCE(${schema}::text, current_schema(), '')))`;
    if (schema !== null) await tx`CREATE SCHEMA IF NOT EXISTS ${tx(schema)}`;
    await tx`CREATE TABLE IF NOT EXISTS schema_migrations (
      version     INTEGER PRIMARY KEY,
      name        TEXT NOT NULL,
      applied_at  BIGINT NOT NULL
    )`;
    const applied = await tx<AppliedMigration[]>`SELECT version, name FROM schema_migrations ORDER BY version`;
    checkHistory(applied, list);
    const done = new Set(applied.map((row) => row.version));
    const newlyApplied: number[] = [];
    for (const migration of [...list].sort((a, b) => a.version - b.version)) {
      if (done.has(migration.version)) continue;
      // Simple protocol: a migration is several statements (and may define functions with $$ bodies).
      await tx.unsafe(migration.sql).simple();
      await tx`INSERT INTO schema_migrations (version, name, applied_at) VALUES (${migration.version}, ${migration.name}, ${clock.now()})`;
      newlyApplied.push(migration.version);
    }
    // Not versioned like the tables: (re)installed when their definitions changed (ledger-functions.ts).
    await installLedgerFunctions(tx);
    return newlyApplied;
  });
}
