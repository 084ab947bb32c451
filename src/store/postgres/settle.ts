import { chargeFor, validateSettle } from '../ledger-rules.js';
import type { SettleInput, SettleResult } from '../types.js';
import { type PgSql, transaction } from './database.js';
import { expireGrants } from './expire.js';
import { finalize } from './finalize.js';
import { balanceOf } from './grants.js';
import { allocationsOf, lockExpiredHolds, lockHold } from './holds.js';
import { recordUsage } from './usage.js';

/**
 * Settle, void and the reaper: each one READ COMMITTED transaction whose first step locks the hold row(s),
 * so two instances ending the same hold queue there and the second reads the status the first committed.
 */

export async function settleHold(sql: PgSql, input: SettleInput, now: number): Promise<SettleResult> {
  validateSettle(input);
  return transaction(sql, async (tx): Promise<SettleResult> => {
    // The allocations never change once written, so they are read in the same round trip as the lock.
    const [hold, allocations] = await Promise.all([lockHold(tx, input.holdId), allocationsOf(tx, [input.holdId])]);
    if (!hold) return { status: 'unknown_hold' };
    if (hold.status !== 'pending') {
      return { status: 'already_final', balance: await balanceOf(tx, hold.accountId, hold.environment, now) };
    }
    const charged = chargeFor(input.amount, hold.amount);
    const [, , balance] = await Promise.all([
      finalize(tx, [{ hold, charged }], allocations, now),
      recordUsage(tx, hold, input.usage, charged, now),
      balanceOf(tx, hold.accountId, hold.environment, now),
    ]);
    return { status: 'settled', charged, balance };
  });
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
 */
export async function reapExpiredHolds(sql: PgSql, limit: number, now: number): Promise<number> {
  if (limit === 0) return 0;
  return transaction(sql, async (tx) => {
    const holds = await lockExpiredHolds(tx, now, limit);
    if (holds.length > 0) {
      const allocations = await allocationsOf(tx, holds.map((hold) => hold.id));
      await finalize(tx, holds.map((hold) => ({ hold, charged: null })), allocations, now);
    }
    await expireGrants(tx, now, limit);
    return holds.length;
  });
}
