/**
 * What both stores' migrate() share: a migration is a versioned SQL string, and the list is append-only
 * (a released migration is never edited: its name is checked on every start, a change is a new entry).
 * Kept as strings so the package ships no SQL files.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export interface AppliedMigration {
  version: number;
  name: string;
}

/** Refuses to run against a database written by a newer build or with a rewritten migration. */
export function checkHistory(applied: readonly AppliedMigration[], list: readonly Migration[]): void {
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
