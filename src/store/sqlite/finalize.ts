import { splitCharge } from '../ledger-rules.js';
import type { SettleInput, SettleResult } from '../types.js';
import { releaseCommitted } from './daily-usage.js';
import type { SqliteConnection } from './database.js';
import { adjustRemaining, balanceAtCommit } from './grants.js';
import { type EndingHold, type HoldFacts, findEndingHold, settleIfPending, settleKnownIfPending, voidHold } from './holds.js';
import { type Entry, appendEntries } from './journal.js';
import { recordUsage } from './usage.js';

/**
 * The whole settle, inside an IMMEDIATE transaction. A hold that is already final answers with what it
 * was settled for, so a settle retried after its reply was lost reports the charge it made the first time.
 * The balance it reports is the one the transaction commits (balanceAtCommit, grants.ts). `known`: the
 * hold's facts, when this process reserved it (ledger.ts); they spare the settle reading them back.
 */
export function settleHold(conn: SqliteConnection, input: SettleInput, now: number, known?: HoldFacts): SettleResult {
  if (known !== undefined) {
    const charged = settleKnownIfPending(conn, known, input.amount, now);
    if (charged !== null) return settled(conn, known, charged, input, now);
  } else {
    const ending = settleIfPending(conn, input.holdId, input.amount, now);
    if (ending !== null) return settled(conn, ending, ending.settledAmount ?? 0, input, now);
  }
  const ending = findEndingHold(conn, input.holdId);
  if (!ending) return { status: 'unknown_hold' };
  const { hold } = ending;
  // Not pending, or the UPDATE above would have settled it: the same transaction saw both.
  if (hold.status === 'pending') throw new Error(`hold ${hold.id} is pending but was not settled`);
  return {
    status: 'already_final',
    charged: ending.settledAmount ?? 0,
    voided: hold.status === 'voided',
    balance: balanceAtCommit(conn, hold.accountId, hold.environment, now),
  };
}

function settled(conn: SqliteConnection, facts: HoldFacts, charged: number, input: SettleInput, now: number): SettleResult {
  postSettle(conn, facts, charged, input, now);
  return { status: 'settled', charged, balance: balanceAtCommit(conn, facts.hold.accountId, facts.hold.environment, now) };
}

/**
 * What follows a hold's settle for `charged` credits (the hold row already says so, settleIfPending):
 * the charged part posted and the rest returned to their grants (the split is splitCharge's,
 * ledger-rules.ts), the day counters and the usage. Must run inside an IMMEDIATE transaction. If a grant
 * expired while held, its released part lands in an expired grant: the next reap expires it (expire.ts).
 */
function postSettle(conn: SqliteConnection, ending: HoldFacts, charged: number, input: SettleInput, now: number): void {
  const { hold } = ending;
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
  releaseCommitted(conn, hold.keyId, ending.parentKeyId, hold.day, hold.amount - charged);
  recordUsage(conn, hold, input.usage, charged, now);
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
  voidHold(conn, hold.id, now);
  releaseCommitted(conn, hold.keyId, ending.parentKeyId, hold.day, hold.amount);
}
