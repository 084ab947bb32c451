import type { SqliteConnection } from './database.js';

/**
 * Credits a key has committed (held + settled) on a UTC day, attributed to the day of the reserve.
 * The daily cap reads this one row instead of summing holds.
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
 * Gives back what a hold did not spend. A plain UPDATE, not an upsert: SQLite checks the CHECK constraint
 * on the would-be inserted row too, and the row always exists since the reserve created it. The
 * CHECK (committed >= 0) catches a double release.
 */
export function releaseCommitted(conn: SqliteConnection, keyId: string, day: string, credits: number): void {
  if (credits === 0) return;
  conn.run('UPDATE key_daily_usage SET committed = committed - ? WHERE key_id = ? AND day = ?', credits, keyId, day);
}
