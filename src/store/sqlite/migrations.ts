import type { Clock } from '../../core/clock.js';
import type { SqliteConnection } from './database.js';
import { schemaV1 } from './schema-v1.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/**
 * Ordered and append-only: a released migration is never edited (its name is checked on every start),
 * a change is a new entry. Kept as strings so the package ships no SQL files.
 */
export const migrations: readonly Migration[] = [{ version: 1, name: 'initial_ledger', sql: schemaV1 }];

interface AppliedRow {
  version: number;
  name: string;
}

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
    const applied = conn.db.prepare('SELECT version, name FROM schema_migrations ORDER BY version').all() as AppliedRow[];
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

/** Refuses to run against a database written by a newer build or with a rewritten migration. */
function checkHistory(applied: AppliedRow[], list: readonly Migration[]): void {
  const known = new Map(list.map((migration) => [migration.version, migration.name]));
  for (const row of applied) {
    const name = known.get(row.version);
    if (name === undefined) {
      throw new Error(`database has migration ${row.version} (${row.name}) that this build does not know; refusing to run`);
    }
    if (name !== row.name) {
      throw new Error(`migration ${row.version} is named ${row.name} in the database but ${name} in this build`);
    }
  }
}
