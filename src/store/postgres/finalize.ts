import { type Allocation, splitCharge } from '../ledger-rules.js';
import { type DayRelease, releaseDays } from './daily-usage.js';
import type { PgQueryable } from './database.js';
import { adjustRemaining } from './grants.js';
import { type Hold, finalizeHolds } from './holds.js';
import { type Entry, appendEntries } from './journal.js';

export interface Finalization {
  /** A pending hold, locked by the caller. */
  hold: Hold;
  /** Credits to post (already clamped to the hold); null voids the hold. */
  charged: number | null;
}

/**
 * Ends pending holds: posts the charged part of each, returns the rest to the grants and to the day of the
 * reserve, and journals every movement. Settle, void and the reaper all come through here, so they take
 * their locks in the same order: the holds (locked by the caller), then the days, then the grants.
 * If a grant expired while held, what is returned to it is expired by the next reap (expire.ts).
 */
export async function finalize(
  tx: PgQueryable,
  items: readonly Finalization[],
  allocations: ReadonlyMap<string, readonly Allocation[]>,
  now: number,
): Promise<void> {
  const entries: Entry[] = [];
  const grantDeltas = new Map<number, number>();
  const days: DayRelease[] = [];
  for (const { hold, charged } of items) {
    const owner = { accountId: hold.accountId, environment: hold.environment, holdId: hold.id };
    for (const part of splitCharge(allocations.get(hold.id) ?? [], charged ?? 0)) {
      const returned = charged === null ? part.amount : part.released;
      // A fully spent allocation changes nothing in its grant, so that grant is neither locked nor written.
      if (returned > 0) grantDeltas.set(part.grantId, (grantDeltas.get(part.grantId) ?? 0) + returned);
      if (charged === null) {
        entries.push({ ...owner, kind: 'void', amount: part.amount, grantId: part.grantId });
      } else {
        entries.push({ ...owner, kind: 'settle', amount: part.spent, grantId: part.grantId });
        entries.push({ ...owner, kind: 'release', amount: part.released, grantId: part.grantId });
      }
    }
    days.push({ keyId: hold.keyId, day: hold.day, credits: hold.amount - (charged ?? 0) });
  }
  await Promise.all([
    releaseDays(tx, days),
    adjustRemaining(tx, grantDeltas),
    finalizeHolds(tx, items.map(({ hold, charged }) => ({ holdId: hold.id, settledAmount: charged })), now),
    appendEntries(tx, entries, now),
  ]);
}
