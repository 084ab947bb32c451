import type { SettleInput, UsageRecord } from '../types.js';
import { assertCount, invalidInput } from '../errors.js';
import { releaseCommitted } from './daily-usage.js';
import type { SqliteConnection } from './database.js';
import { adjustRemaining } from './grants.js';
import { type Hold, allocationsOf, finalizeHold } from './holds.js';
import { appendEntry } from './journal.js';
import { recordUsage } from './usage.js';

/**
 * Posts `charged` credits of a pending hold and returns the rest to their grants. Must run inside an
 * IMMEDIATE transaction. Allocations are consumed in allocation order (earned soonest-expiring first), so
 * what goes back to `remaining` is the latest-expiring part, which is the part most likely still usable.
 * If a grant expired while held, its released part lands in an expired grant and so expires with it.
 */
export function settlePending(conn: SqliteConnection, hold: Hold, input: SettleInput, now: number): number {
  const charged = Math.min(Math.max(input.amount, 0), hold.amount);
  const owner = { accountId: hold.accountId, environment: hold.environment, holdId: hold.id };
  let toCharge = charged;
  for (const allocation of allocationsOf(conn, hold.id)) {
    const spent = Math.min(allocation.amount, toCharge);
    const released = allocation.amount - spent;
    toCharge -= spent;
    appendEntry(conn, { ...owner, kind: 'settle', amount: spent, grantId: allocation.grantId }, now);
    if (released > 0) {
      adjustRemaining(conn, allocation.grantId, released);
      appendEntry(conn, { ...owner, kind: 'release', amount: released, grantId: allocation.grantId }, now);
    }
  }
  finalizeHold(conn, hold.id, charged, now);
  releaseCommitted(conn, hold.keyId, hold.day, hold.amount - charged);
  recordUsage(conn, hold, input.usage, charged, now);
  return charged;
}

/** Returns every held credit to its grant; used by void and by the reaper. */
export function voidPending(conn: SqliteConnection, hold: Hold, now: number): void {
  for (const allocation of allocationsOf(conn, hold.id)) {
    adjustRemaining(conn, allocation.grantId, allocation.amount);
    appendEntry(
      conn,
      { accountId: hold.accountId, environment: hold.environment, kind: 'void', amount: allocation.amount, grantId: allocation.grantId, holdId: hold.id },
      now,
    );
  }
  finalizeHold(conn, hold.id, null, now);
  releaseCommitted(conn, hold.keyId, hold.day, hold.amount);
}

/**
 * Checked before the transaction, so a malformed settle throws without touching the hold (which stays
 * pending until settled correctly or reaped). Negative costs are not an error: the contract clamps them to 0.
 * Latency may be fractional (performance.now()); it is rounded when stored.
 */
export function validateSettle(input: SettleInput): void {
  if (!Number.isSafeInteger(input.amount)) throw invalidInput(`amount must be an integer, got ${String(input.amount)}`);
  validateUsage(input.usage);
}

function validateUsage(usage: UsageRecord): void {
  assertCount(usage.promptTokens, 'usage.promptTokens', 0);
  assertCount(usage.completionTokens, 'usage.completionTokens', 0);
  if (!Number.isFinite(usage.latencyMs) || usage.latencyMs < 0) {
    throw invalidInput(`usage.latencyMs must be a finite number >= 0, got ${String(usage.latencyMs)}`);
  }
}
