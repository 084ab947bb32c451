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

const ENTRY_COLUMNS = 'INSERT INTO ledger_entries (account_id, environment, kind, amount, grant_id, hold_id, created_at) VALUES ';
const ENTRY_ROW = '(?, ?, ?, ?, ?, ?, ?)';
/** Rows per INSERT: keeps the bound parameters far under SQLite's limit and the cached statements few. */
const ROWS_PER_INSERT = 32;
/** The INSERT of n rows, built once per n (the connection then prepares it once). */
const insertOf: string[] = [];

/**
 * Entries in as few INSERTs as it takes, in order: a settle writes its `settle` and `release` rows in one
 * statement instead of one each. Zero-credit movements are skipped rather than written: the table's CHECK
 * requires amount > 0.
 */
export function appendEntries(conn: SqliteConnection, entries: readonly Entry[], now: number): void {
  const rows = entries.filter((e) => e.amount !== 0);
  for (let from = 0; from < rows.length; from += ROWS_PER_INSERT) {
    const part = rows.slice(from, from + ROWS_PER_INSERT);
    const sql = (insertOf[part.length] ??= ENTRY_COLUMNS + Array.from({ length: part.length }, () => ENTRY_ROW).join(', '));
    const params: (string | number | null)[] = [];
    for (const e of part) params.push(e.accountId, e.environment, e.kind, e.amount, e.grantId, e.holdId, now);
    conn.run(sql, ...params);
  }
}

export function appendEntry(conn: SqliteConnection, entry: Entry, now: number): void {
  appendEntries(conn, [entry], now);
}
