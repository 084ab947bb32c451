import type { Environment } from '../types.js';
import type { SqliteConnection } from './database.js';

/**
 * Kinds of movement of credits in and out of a grant's `remaining`:
 * grant (+amount), reserve (-), release and void (+, back from a hold), settle (spent, no change to remaining:
 * the credits already left `remaining` at reserve). So for every grant:
 *   remaining = grant - reserve + release + void
 *   spent     = settle
 * and for every final hold the reserve entries equal settle + release + void. `ledger verify` checks this.
 */
export type EntryKind = 'grant' | 'reserve' | 'settle' | 'release' | 'void';

export interface Entry {
  accountId: string;
  environment: Environment;
  kind: EntryKind;
  amount: number;
  grantId: number;
  holdId: string | null;
}

/** Zero-credit movements are skipped rather than written: the table's CHECK requires amount > 0. */
export function appendEntry(conn: SqliteConnection, entry: Entry, now: number): void {
  if (entry.amount === 0) return;
  conn.run(
    `INSERT INTO ledger_entries (account_id, environment, kind, amount, grant_id, hold_id, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
    entry.accountId,
    entry.environment,
    entry.kind,
    entry.amount,
    entry.grantId,
    entry.holdId,
    now,
  );
}
