import type { EntryKind } from '../journal-kinds.js';
import type { Environment } from '../types.js';
import type { SqliteConnection } from './database.js';

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
