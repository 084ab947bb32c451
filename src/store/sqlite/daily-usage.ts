import type { SqliteConnection } from './database.js';
import { BUDGET_KEYS_WHERE, KEY_CHAIN_SQL } from './key-chain.js';

/**
 * Credits a key has committed (held + settled) on a UTC day, attributed to the day of the reserve; for a
 * capped key, its descendants' too (key-chain.ts). The daily cap reads this one row instead of summing holds.
 */
export function committedOn(conn: SqliteConnection, keyId: string, day: string): number {
  return conn.get<{ committed: number }>('SELECT committed FROM key_daily_usage WHERE key_id = ? AND day = ?', keyId, day)
    ?.committed ?? 0;
}

/** Adds a reserve's credits to its day; the row is created on the day's first reserve. */
export function addCommitted(conn: SqliteConnection, keyId: string, day: string, credits: number): void {
  conn.run(
    `INSERT INTO key_daily_usage (key_id, day, committed) VALUES (?, ?, ?)
     ON CONFLICT (key_id, day) DO UPDATE SET committed = committed + excluded.committed`,
    keyId,
    day,
    credits,
  );
}

/**
 * Gives back what a hold did not spend, to the key's row and those of its capped ancestors (the rows its
 * reserve added to: a key's parent never changes). A plain UPDATE, not an upsert: SQLite checks the CHECK
 * constraint on the would-be inserted row too, and the rows always exist since the reserve created them.
 * The CHECK (committed >= 0) catches a double release. A key without a parent has one row to update, by its
 * primary key, without the recursive walk of the chain.
 */
export function releaseCommitted(conn: SqliteConnection, keyId: string, parentKeyId: string | null, day: string, credits: number): void {
  if (credits === 0) return;
  if (parentKeyId === null) {
    conn.run('UPDATE key_daily_usage SET committed = committed - ? WHERE key_id = ? AND day = ?', credits, keyId, day);
    return;
  }
  conn.run(
    `UPDATE key_daily_usage SET committed = committed - ?
     WHERE day = ? AND key_id IN (${KEY_CHAIN_SQL} SELECT id FROM chain WHERE ${BUDGET_KEYS_WHERE})`,
    credits,
    day,
    keyId,
  );
}
