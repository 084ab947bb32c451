import type { EntryKind } from '../journal-kinds.js';
import type { Environment } from '../types.js';
import type { PgQueryable } from './database.js';

/** Grant entries are written with the grant itself, in one statement (grants.ts). */
export type HoldOrExpiryKind = Exclude<EntryKind, 'grant'>;

export interface Entry {
  accountId: string;
  environment: Environment;
  kind: HoldOrExpiryKind;
  amount: number;
  grantId: number;
  /** Null exactly for expire entries (the table's CHECK). */
  holdId: string | null;
}

/**
 * One INSERT for all the entries of a transaction, in the given order (ids follow it). Zero-credit
 * movements are skipped rather than written: the table's CHECK requires amount > 0.
 */
export async function appendEntries(tx: PgQueryable, entries: readonly Entry[], now: number): Promise<void> {
  const rows = entries.filter((entry) => entry.amount > 0);
  if (rows.length === 0) return;
  await tx`
    INSERT INTO ledger_entries (account_id, environment, kind, amount, grant_id, hold_id, created_at)
    SELECT e.account_id, e.environment, e.kind, e.amount, e.grant_id, e.hold_id, ${now}::bigint
    FROM unnest(
      ${rows.map((e) => e.accountId)}::text[],
      ${rows.map((e) => e.environment)}::text[],
      ${rows.map((e) => e.kind)}::text[],
      ${rows.map((e) => e.amount)}::bigint[],
      ${rows.map((e) => e.grantId)}::bigint[],
      ${rows.map((e) => e.holdId)}::text[]
    ) WITH ORDINALITY AS e(account_id, environment, kind, amount, grant_id, hold_id, ord)
    ORDER BY e.ord`;
}
