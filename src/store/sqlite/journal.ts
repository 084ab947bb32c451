import type { EntryKind } from '../journal-kinds.js';
import type { Environment } from '../types.js';
import type { AtCommit, SqliteConnection } from './database.js';
import { insertRows } from './multi-row-insert.js';

export interface Entry {
  accountId: string;
  environment: Environment;
  kind: EntryKind;
  amount: number;
  grantId: number;
  holdId: string | null;
}

const ENTRY_INSERT = {
  head: 'INSERT INTO ledger_entries (account_id, environment, kind, amount, grant_id, hold_id, created_at) VALUES ',
  row: '(?, ?, ?, ?, ?, ?, ?)',
};

/**
 * The journal rows of a transaction, written at its end in as few INSERTs as it takes (SqliteConnection.atCommit):
 * a request's reserve and settle each wrote their own INSERT, about 12 us each among the store's 130 us a
 * request (docs/performance.md, thirteenth session), where one multi-row INSERT now writes the rows of the
 * whole group. Same transaction as the changes of `remaining` they record, so the journal still never
 * disagrees with the grants once committed; nothing reads the journal inside a write (the audit reads it in a
 * transaction of its own, after the group's COMMIT).
 */
class JournalRows implements AtCommit {
  readonly params: (string | number | null)[] = [];

  run(conn: SqliteConnection): void {
    insertRows(conn, ENTRY_INSERT, 7, this.params);
  }
}

/**
 * Adds entries to the transaction's journal rows, in order. Zero-credit movements are skipped rather than
 * written: the table's CHECK requires amount > 0.
 */
export function appendEntries(conn: SqliteConnection, entries: readonly Entry[], now: number): void {
  const params = conn.atCommit('ledger_entries', () => new JournalRows()).params;
  for (const e of entries) {
    if (e.amount !== 0) params.push(e.accountId, e.environment, e.kind, e.amount, e.grantId, e.holdId, now);
  }
}

export function appendEntry(conn: SqliteConnection, entry: Entry, now: number): void {
  appendEntries(conn, [entry], now);
}
