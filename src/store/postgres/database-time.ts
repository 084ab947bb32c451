/**
 * The instant a PostgreSQL statement decides with: the store's injected clock when a test moves it by hand
 * (`Clock.manual`), otherwise the database server's own time, read inside the statement. Production takes
 * the second path: a hold's lease, which holds are due and which grants have expired are then judged by one
 * clock for every gateway instance, whatever their machines' clocks say or do (docs/ledger.md, "Time").
 */
import { utcDay } from '../utc-day.js';
import type { PgQueryable } from './database.js';

/** An epoch-ms instant given by the caller, or null: the database's time. */
export type Instant = number | null;

/**
 * `now()` is the start of the statement's transaction: every statement of one transaction sees the same
 * value, and a single-statement call sees its own start. Floored, as Date.now() is, so the UTC day of these
 * milliseconds is the UTC day of now() itself.
 */
export function instantSql(db: PgQueryable, at: Instant) {
  return at === null ? db`floor(extract(epoch FROM now()) * 1000)::bigint` : db`${at}::bigint`;
}

/** The UTC day (`YYYY-MM-DD`, as utcDay()) of the same instant. */
export function utcDaySql(db: PgQueryable, at: Instant) {
  return at === null ? db`to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD')` : db`${utcDay(at)}::text`;
}

/** Resolves the instant to a number inside a transaction, for steps that stamp rows with it. */
export async function resolveInstant(tx: PgQueryable, at: Instant): Promise<number> {
  if (at !== null) return at;
  const [row] = await tx<{ ms: number }[]>`SELECT ${instantSql(tx, null)} AS ms`;
  if (row === undefined) throw new Error('the database returned no time');
  return row.ms;
}
