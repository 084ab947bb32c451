import { chargeFor, splitCharge } from '../ledger-rules.js';
import type { SettleInput, SettleResult } from '../types.js';
import { releaseCommitted } from './daily-usage.js';
import type { SqliteConnection } from './database.js';
import { adjustRemaining, balanceOf } from './grants.js';
import { type Hold, allocationsOf, finalizeHold, findHold } from './holds.js';
import { appendEntry } from './journal.js';
import { recordUsage } from './usage.js';

/**
 * The whole settle, inside an IMMEDIATE transaction. A hold that is already final answers with what it
 * was settled for, so a settle retried after its reply was lost reports the charge it made the first time.
 */
export function settleHold(conn: SqliteConnection, input: SettleInput, now: number): SettleResult {
  const hold = findHold(conn, input.holdId);
  if (!hold) return { status: 'unknown_hold' };
  if (hold.status !== 'pending') {
    const row = conn.get<{ settled_amount: number | null }>('SELECT settled_amount FROM holds WHERE id = ?', hold.id);
    return {
      status: 'already_final',
      charged: row?.settled_amount ?? 0,
      voided: hold.status === 'voided',
      balance: balanceOf(conn, hold.accountId, hold.environment, now),
    };
  }
  const charged = settlePending(conn, hold, input, now);
  return { status: 'settled', charged, balance: balanceOf(conn, hold.accountId, hold.environment, now) };
}

/**
 * Posts the charged part of a pending hold and returns the rest to their grants (the split is
 * splitCharge's, ledger-rules.ts). Must run inside an IMMEDIATE transaction. If a grant expired while
 * held, its released part lands in an expired grant: the next reap expires it (expire.ts).
 */
export function settlePending(conn: SqliteConnection, hold: Hold, input: SettleInput, now: number): number {
  const charged = chargeFor(input.amount, hold.amount);
  const owner = { accountId: hold.accountId, environment: hold.environment, holdId: hold.id };
  for (const part of splitCharge(allocationsOf(conn, hold.id), charged)) {
    appendEntry(conn, { ...owner, kind: 'settle', amount: part.spent, grantId: part.grantId }, now);
    if (part.released > 0) {
      adjustRemaining(conn, part.grantId, part.released);
      appendEntry(conn, { ...owner, kind: 'release', amount: part.released, grantId: part.grantId }, now);
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
