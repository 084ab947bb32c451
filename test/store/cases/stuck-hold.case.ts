import { expect } from 'vitest';
import type { ManualClock } from '../../../src/core/clock.js';
import { ReapIncomplete } from '../../../src/store/reap-isolated.js';
import type { Store } from '../../../src/store/types.js';
import { HOUR, hold, purchased, seedAccount } from './harness.js';

/**
 * The reaper with a due hold it cannot void, on a store whose books the test edits by hand (so each store's
 * own test file runs these: the conformance cases talk to the store through its interface only).
 */
export interface StuckHoldContext {
  store: Store;
  clock: ManualClock;
  /** Sets the account's grants' `remaining` to their amount: voiding a hold that draws on them breaks their CHECK. */
  fillGrants(accountId: string): Promise<void>;
  /** Takes `by` back off the account's grants' `remaining`: the books repaired. */
  repairGrants(accountId: string, by: number): Promise<void>;
  /** Every hold's id and status, by id. */
  holdStatuses(): Promise<{ id: string; status: string }[]>;
}

export async function voidsPastAStuckHold(ctx: StuckHoldContext): Promise<void> {
  const { store, clock } = ctx;
  const broken = await seedAccount(store);
  const healthy = await seedAccount(store);
  await store.ledger.grant(purchased(broken, 100));
  await store.ledger.grant(purchased(healthy, 100));
  // The oldest lease first: the hold that cannot be voided comes first in every pass.
  const stuck = await hold(store, broken, 10, 1_000);
  const due = await hold(store, healthy, 10, 2_000);
  await ctx.fillGrants(broken.accountId);
  clock.advance(HOUR);
  const failure = await store.ledger.reapExpiredHolds(100).then(
    () => null,
    (e: unknown) => e,
  );
  expect(failure).toBeInstanceOf(ReapIncomplete);
  expect(failure).toMatchObject({ voided: 1, failedHolds: [{ holdId: stuck }], expiryError: null, batchError: expect.stringMatching(/CHECK|check constraint/) });
  expect(await ctx.holdStatuses()).toEqual(
    [{ id: stuck, status: 'pending' }, { id: due, status: 'voided' }].sort((x, y) => (x.id < y.id ? -1 : 1)),
  );
  expect(await store.ledger.balance(healthy.accountId, healthy.environment)).toMatchObject({ purchased: 100, reserved: 0 });
  // A hold that comes due later is voided by the next pass, which names the stuck one again (and, knowing a
  // hold is stuck, goes hold by hold at once).
  await hold(store, healthy, 5, 1_000);
  clock.advance(HOUR);
  await expect(store.ledger.reapExpiredHolds(100)).rejects.toMatchObject({ voided: 1, failedHolds: [{ holdId: stuck }], batchError: null });
  // Repaired, it is voided like any other.
  await ctx.repairGrants(broken.accountId, 10);
  expect(await store.ledger.reapExpiredHolds(100)).toBe(1);
  expect(await store.ledger.countPendingHolds()).toBe(0);
  expect((await store.ledger.audit()).findings).toEqual([]);
}

export async function voidsPastAPageOfStuckHolds(ctx: StuckHoldContext): Promise<void> {
  const { store, clock } = ctx;
  const broken = await seedAccount(store);
  const healthy = await seedAccount(store);
  await store.ledger.grant(purchased(broken, 100));
  await store.ledger.grant(purchased(healthy, 100));
  const stuck = [await hold(store, broken, 10, 1_000), await hold(store, broken, 10, 1_001)];
  await hold(store, healthy, 10, 2_000);
  await ctx.fillGrants(broken.accountId);
  clock.advance(HOUR);
  // A pass of two: both listed first are stuck; the pass lists past them and voids the third.
  await expect(store.ledger.reapExpiredHolds(2)).rejects.toMatchObject({ voided: 1, failedHolds: stuck.map((holdId) => ({ holdId })) });
  expect(await store.ledger.balance(healthy.accountId, healthy.environment)).toMatchObject({ purchased: 100, reserved: 0 });
  expect(await store.ledger.countPendingHolds()).toBe(2);
}
