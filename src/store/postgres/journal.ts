import type { Environment } from '../types.js';
import type { PgQueryable } from './database.js';

/**
 * Kinds of movement of credits in and out of a grant's `remaining`:
 * grant (+amount), reserve (-), release and void (+, back from a hold), settle (spent, no change to remaining:
 * the credits already left `remaining` at reserve). So for every grant:
 *   remaining = grant - reserve + release + void
 *   spent     = settle
 * and for every final hold the reserve entries equal settle + release + void. `ledger verify` checks this.
 * Grant entries are written with the grant itself (grants.ts).
 */
export type HoldEntryKind = 'reserve' | 'settle' | 'release' | 'void';

export interface HoldEntry {
  accountId: string;
  environment: Environment;
  kind: HoldEntryKind;
  amount: number;
  grantId: number;
  holdId: string;
}

/**
 * One INSERT for all the entries of a transaction, in the given order (ids follow it). Zero-credit
 * movements are skipped rather than written: the table's CHECK requires amount > 0.
 */
export async function appendEntries(tx: PgQueryable, entries: readonly HoldEntry[], now: number): Promise<void> {
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
