import type { SqlParam, SqliteConnection } from './database.js';

/** An INSERT's text up to VALUES, and one row's placeholders. */
export interface RowsInsert {
  head: string;
  row: string;
}

/** Rows per INSERT: keeps the bound parameters far under SQLite's limit and the cached statements few. */
const ROWS_PER_INSERT = 32;

/** The INSERT of n rows of each statement, built once per n (the connection then prepares it once). */
const texts = new WeakMap<RowsInsert, string[]>();

function textOf(insert: RowsInsert, rows: number): string {
  let byCount = texts.get(insert);
  if (byCount === undefined) texts.set(insert, (byCount = []));
  return (byCount[rows] ??= insert.head + Array.from({ length: rows }, () => insert.row).join(', '));
}

/**
 * Inserts the rows whose parameters `params` holds, `columns` a row, in order, ROWS_PER_INSERT rows a
 * statement: a transaction's rows of one table are written together (journal.ts, usage.ts). A request's
 * three journal rows cost 24.6 us in two statements of their own and 13 us among a group's in one
 * (bench/lib/statement-timing.mjs, docs/performance.md, thirteenth session).
 */
export function insertRows(conn: SqliteConnection, insert: RowsInsert, columns: number, params: readonly SqlParam[]): void {
  const perStatement = ROWS_PER_INSERT * columns;
  for (let from = 0; from < params.length; from += perStatement) {
    const part = params.slice(from, from + perStatement);
    conn.run(textOf(insert, part.length / columns), ...part);
  }
}
