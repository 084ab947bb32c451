import { validateSettle } from '../ledger-rules.js';
import type { Environment, SettleInput, SettleResult } from '../types.js';
import { utcDay } from '../utc-day.js';
import { type PgSql, transaction } from './database.js';
import type { ReapSteps } from '../reap-isolated.js';
import { type Instant, instantSql, resolveInstant } from './database-time.js';
import { expireGrants } from './expire.js';
import { finalize } from './finalize.js';
import { type BalanceRow, toBalance } from './grants.js';
import { allocationsOf, lockExpiredHolds, lockHold } from './holds.js';

/**
 * Settle, void and the reaper all lock the hold row(s) first, so two instances ending the same hold queue
 * there and the second reads the status the first committed. Settle, on every request's path, is one
 * statement (svc_settle_v3, ledger-functions.ts); void and the reaper are transactions sharing finalize().
 */

interface SettleRow extends BalanceRow {
  o_status: 'settled' | 'already_final' | 'unknown_hold';
  o_charged: number | null;
  o_voided: boolean | null;
  o_account_id: string | null;
  o_environment: Environment | null;
}

export async function settleHold(sql: PgSql, input: SettleInput, now: number): Promise<SettleResult> {
  validateSettle(input);
  const { usage } = input;
  const [row] = await sql<SettleRow[]>`
    SELECT * FROM svc_settle_v3(${input.holdId}::text, ${input.amount}::bigint, ${usage.requestId}::text, ${usage.model}::text,
      ${usage.routedModel}::text, ${usage.routedProvider}::text, ${usage.promptTokens}::bigint, ${usage.completionTokens}::bigint,
      ${usage.outcome}::text, ${Math.round(usage.latencyMs)}::bigint, ${usage.shortfallCredits}::bigint, ${utcDay(now)}::text,
      ${now}::bigint, ${usage.cachedTokens ?? 0}::bigint, ${usage.reasoningTokens ?? 0}::bigint)`;
  if (!row) throw new Error('svc_settle_v3 returned no row');
  if (row.o_status === 'unknown_hold' || row.o_account_id === null || row.o_environment === null) return { status: 'unknown_hold' };
  const balance = toBalance(row.o_account_id, row.o_environment, row);
  if (row.o_status === 'already_final') {
    return { status: 'already_final', charged: Number(row.o_charged), voided: row.o_voided === true, balance };
  }
  return { status: 'settled', charged: Number(row.o_charged), balance };
}

export async function voidHold(sql: PgSql, holdId: string, now: number): Promise<boolean> {
  return transaction(sql, async (tx) => {
    const [hold, allocations] = await Promise.all([lockHold(tx, holdId), allocationsOf(tx, [holdId])]);
    if (hold?.status !== 'pending') return false;
    await finalize(tx, [{ hold, charged: null }], allocations, now);
    return true;
  });
}

/**
 * One transaction for the whole batch: its holds are locked with SKIP LOCKED, so reapers on other
 * instances take the next holds instead of waiting, and finalize() then takes the days and grants of
 * all of them in the store's lock order. Last, up to `limit` expired grants are written off (expire.ts),
 * also with SKIP LOCKED, so that step never waits and adds no lock-order edge.
 * Which holds are due and which grants have expired is judged by one instant: with `at` null (production)
 * the database's now() of this very transaction, never a gateway's clock, which may have stepped.
 */
export async function reapExpiredHolds(sql: PgSql, limit: number, at: Instant): Promise<number> {
  if (limit === 0) return 0;
  return transaction(sql, async (tx) => {
    const now = await resolveInstant(tx, at);
    const holds = await lockExpiredHolds(tx, now, limit);
    if (holds.length > 0) {
      const allocations = await allocationsOf(tx, holds.map((hold) => hold.id));
      await finalize(tx, holds.map((hold) => ({ hold, charged: null })), allocations, now);
    }
    await expireGrants(tx, now, limit);
    return holds.length;
  });
}

/** The pieces of that pass, each in its own transaction, for when the pass as a whole fails (reap-isolated.ts). */
export function reapSteps(sql: PgSql, limit: number, at: Instant): Omit<ReapSteps, 'batch'> {
  return {
    dueHoldIds: async (skip) => {
      if (limit === 0) return [];
      const rows = await sql<{ id: string }[]>`
        SELECT id FROM holds WHERE status = 'pending' AND lease_expires_at <= ${instantSql(sql, at)}
          AND NOT (id = ANY(${sql.array([...skip])}::text[]))
        ORDER BY lease_expires_at, created_at, id LIMIT ${limit}`;
      return rows.map((row) => row.id);
    },
    // Locked with the same test of due-ness as the pass's: a hold renewed since it was listed is left alone.
    voidIfDue: (holdId) =>
      transaction(sql, async (tx) => {
        const now = await resolveInstant(tx, at);
        const [hold] = await lockExpiredHolds(tx, now, 1, holdId);
        if (hold === undefined) return false;
        await finalize(tx, [{ hold, charged: null }], await allocationsOf(tx, [hold.id]), now);
        return true;
      }),
    expireGrants: () =>
      transaction(sql, async (tx) => {
        await expireGrants(tx, await resolveInstant(tx, at), limit);
      }),
  };
}
