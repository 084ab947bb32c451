import type { AtCommit, SqliteConnection } from './database.js';
import { BUDGET_KEYS_WHERE, KEY_CHAIN_SQL } from './key-chain.js';

/**
 * What a transaction's reserves and releases add to one key's counter for one day, written once at its end
 * (SqliteConnection.atCommit): under load a group commit holds dozens of reserves and settles of the same key,
 * each of which paid a statement on the same row. Reads of the counter (committedOn) add it to the row, so the
 * cap is checked against everything the transaction has held so far, as when each wrote its own statement.
 */
class DayCounterDelta implements AtCommit {
  delta = 0;

  constructor(
    private readonly keyId: string,
    private readonly day: string,
  ) {}

  /**
   * A net release is a plain UPDATE, not an upsert: SQLite checks the CHECK constraint on the would-be
   * inserted row too, and the row exists since the reserve that held the credits created it. The CHECK
   * (committed >= 0) still catches a release of more than was held, at the COMMIT, which then fails.
   */
  run(conn: SqliteConnection): void {
    if (this.delta > 0) {
      conn.run(
        `INSERT INTO key_daily_usage (key_id, day, committed) VALUES (?, ?, ?)
         ON CONFLICT (key_id, day) DO UPDATE SET committed = committed + excluded.committed`,
        this.keyId,
        this.day,
        this.delta,
      );
    } else if (this.delta < 0) {
      conn.run('UPDATE key_daily_usage SET committed = committed + ? WHERE key_id = ? AND day = ?', this.delta, this.keyId, this.day);
    }
  }
}

const counterKey = (keyId: string, day: string): string => `key_daily_usage\u0000${keyId}\u0000${day}`;

function deltaOf(conn: SqliteConnection, keyId: string, day: string): DayCounterDelta {
  return conn.atCommit(counterKey(keyId, day), () => new DayCounterDelta(keyId, day));
}

/**
 * Credits a key has committed (held + settled) on a UTC day, attributed to the day of the reserve; for a
 * capped key, its descendants' too (key-chain.ts). The daily cap reads this one row instead of summing holds,
 * plus what the open transaction has added to it and not yet written.
 */
export function committedOn(conn: SqliteConnection, keyId: string, day: string): number {
  const written =
    conn.get<{ committed: number }>('SELECT committed FROM key_daily_usage WHERE key_id = ? AND day = ?', keyId, day)?.committed ?? 0;
  return written + (conn.pendingAt<DayCounterDelta>(counterKey(keyId, day))?.delta ?? 0);
}

/** Adds a reserve's credits to its day; the row is created on the day's first reserve. */
export function addCommitted(conn: SqliteConnection, keyId: string, day: string, credits: number): void {
  deltaOf(conn, keyId, day).delta += credits;
}

/**
 * Gives back what a hold did not spend, to the key's counter and those of its capped ancestors (the counters
 * its reserve added to: a key's parent and a key's cap never change). A key without a parent has one counter,
 * without the recursive walk of the chain.
 */
export function releaseCommitted(conn: SqliteConnection, keyId: string, parentKeyId: string | null, day: string, credits: number): void {
  if (credits === 0) return;
  if (parentKeyId === null) {
    deltaOf(conn, keyId, day).delta -= credits;
    return;
  }
  const budgets = conn.all<{ id: string }>(`${KEY_CHAIN_SQL} SELECT id FROM chain WHERE ${BUDGET_KEYS_WHERE}`, keyId);
  for (const { id } of budgets) deltaOf(conn, id, day).delta -= credits;
}
