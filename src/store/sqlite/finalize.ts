import { chargeFor, splitCharge } from '../ledger-rules.js';
import type { SettleInput, SettleResult } from '../types.js';
import { releaseCommitted } from './daily-usage.js';
import type { SqliteConnection } from './database.js';
import { adjustRemaining, balanceAtCommit } from './grants.js';
import { type EndingHold, finalizeHold, findEndingHold } from './holds.js';
import { type Entry, appendEntries } from './journal.js';
import { recordUsage } from './usage.js';

/**
 * The whole settle, inside an IMMEDIATE transaction. A hold that is already final answers with what it
 * was settled for, so a settle retried after its reply was lost reports the charge it made the first time.
 * The balance it reports is the one the transaction commits (balanceAtCommit, grants.ts).
 */
export function settleHold(conn: SqliteConnection, input: SettleInput, now: number): SettleResult {
  const ending = findEndingHold(conn, input.holdId);
  if (!ending) return { status: 'unknown_hold' };
  const { hold } = ending;
  if (hold.status !== 'pending') {
    return {
      status: 'already_final',
      charged: ending.settledAmount ?? 0,
      voided: hold.status === 'voided',
      balance: balanceAtCommit(conn, hold.accountId, hold.environment, now),
    };
  }
  const charged = settlePending(conn, ending, input, now);
  return { status: 'settled', charged, balance: balanceAtCommit(conn, hold.accountId, hold.environment, now) };
}

/**
 * Posts the charged part of a pending hold and returns the rest to their grants (the split is
 * splitCharge's, ledger-rules.ts). Must run inside an IMMEDIATE transaction. If a grant expired while
 * held, its released part lands in an expired grant: the next reap expires it (expire.ts).
 */
export function settlePending(conn: SqliteConnection, ending: EndingHold, input: SettleInput, now: number): number {
  const { hold } = ending;
  const charged = chargeFor(input.amount, hold.amount);
  const owner = { accountId: hold.accountId, environment: hold.environment, holdId: hold.id };
  const entries: Entry[] = [];
  for (const part of splitCharge(ending.allocations, charged)) {
    entries.push({ accountId: owner.accountId, environment: owner.environment, holdId: owner.holdId, kind: 'settle', amount: part.spent, grantId: part.grantId });
    if (part.released > 0) {
      adjustRemaining(conn, owner, part.grantId, part.released);
      entries.push({ accountId: owner.accountId, environment: owner.environment, holdId: owner.holdId, kind: 'release', amount: part.released, grantId: part.grantId });
    }
  }
  appendEntries(conn, entries, now);
  finalizeHold(conn, hold.id, charged, now);
  releaseCommitted(conn, hold.keyId, ending.parentKeyId, hold.day, hold.amount - charged);
  recordUsage(conn, hold, input.usage, charged, now);
  return charged;
}

/** Returns every held credit to its grant; used by void and by the reaper. */
export function voidPending(conn: SqliteConnection, ending: EndingHold, now: number): void {
  const { hold } = ending;
  const entries: Entry[] = [];
  for (const allocation of ending.allocations) {
    adjustRemaining(conn, hold, allocation.grantId, allocation.amount);
    entries.push({
      accountId: hold.accountId,
      environment: hold.environment,
      kind: 'void',
      amount: allocation.amount,
      grantId: allocation.grantId,
      holdId: hold.id,
    });
  }
  appendEntries(conn, entries, now);
  finalizeHold(conn, hold.id, null, now);
  releaseCommitted(conn, hold.keyId, ending.parentKeyId, hold.day, hold.amount);
}
