import { describe, expect, it } from 'vitest';
import { MINUTE, type OpenStore, T0, hold, purchased, reserve, seedAccount, usage, useFreshStore } from './harness.js';

/** renewHold: a live completion keeps its hold from the reaper by pushing its lease out. */
export function renewCases(open: OpenStore): void {
  describe('renewing a hold', () => {
    const h = useFreshStore(open);

    it('keeps a renewed hold from the reaper at its old lease, and reaps it at the new one', async () => {
      const { store, clock } = h();
      const owner = await seedAccount(store);
      await store.ledger.grant(purchased(owner, 100));
      const holdId = await hold(store, owner, 10, MINUTE);

      clock.advance(50_000);
      expect(await store.ledger.renewHold(holdId, MINUTE)).toBe(true);
      // Reserving the same id again reports the lease as it is now.
      expect(await reserve(store, owner, 10, MINUTE, holdId)).toMatchObject({ ok: true, leaseExpiresAt: T0 + 110_000 });

      clock.set(T0 + MINUTE); // the old lease: due, had it not been renewed
      expect(await store.ledger.reapExpiredHolds(10)).toBe(0);
      clock.set(T0 + 110_000 - 1);
      expect(await store.ledger.reapExpiredHolds(10)).toBe(0);
      expect(await store.ledger.countPendingHolds(owner.accountId)).toBe(1);
      clock.set(T0 + 110_000);
      expect(await store.ledger.reapExpiredHolds(10)).toBe(1);
      expect(await store.ledger.balance(owner.accountId, 'live')).toMatchObject({ purchased: 100, reserved: 0 });
      expect(await store.ledger.audit()).toEqual({ checks: 5, findings: [] });
    });

    it('never shortens a lease', async () => {
      const { store, clock } = h();
      const owner = await seedAccount(store);
      await store.ledger.grant(purchased(owner, 100));
      const holdId = await hold(store, owner, 10, 10 * MINUTE);
      expect(await store.ledger.renewHold(holdId, MINUTE)).toBe(true);
      expect(await store.ledger.renewHold(holdId, 0)).toBe(true);
      clock.set(T0 + 10 * MINUTE - 1);
      expect(await store.ledger.reapExpiredHolds(10)).toBe(0);
      clock.set(T0 + 10 * MINUTE);
      expect(await store.ledger.reapExpiredHolds(10)).toBe(1);
    });

    it('counts the new lease from now, and rescues a hold whose lease ran out before the reaper came', async () => {
      const { store, clock } = h();
      const owner = await seedAccount(store);
      await store.ledger.grant(purchased(owner, 100));
      const holdId = await hold(store, owner, 10, MINUTE);
      clock.set(T0 + 30 * MINUTE);
      expect(await store.ledger.renewHold(holdId, 5 * MINUTE)).toBe(true);
      expect(await store.ledger.reapExpiredHolds(10)).toBe(0);
      clock.set(T0 + 35 * MINUTE - 1);
      expect(await store.ledger.reapExpiredHolds(10)).toBe(0);
      expect(await store.ledger.settle({ holdId, amount: 7, usage: usage() })).toMatchObject({ status: 'settled', charged: 7 });
      expect(await store.ledger.balance(owner.accountId, 'live')).toMatchObject({ purchased: 93, reserved: 0 });
      expect(await store.ledger.audit()).toEqual({ checks: 5, findings: [] });
    });

    it('answers false for an unknown hold and for a settled, voided or reaped one, and changes nothing', async () => {
      const { store, clock } = h();
      const owner = await seedAccount(store);
      await store.ledger.grant(purchased(owner, 100));
      const settled = await hold(store, owner, 10, MINUTE);
      const voided = await hold(store, owner, 10, MINUTE);
      const reaped = await hold(store, owner, 10, MINUTE);
      await store.ledger.settle({ holdId: settled, amount: 4, usage: usage() });
      await store.ledger.void(voided);
      clock.set(T0 + MINUTE);
      expect(await store.ledger.reapExpiredHolds(10)).toBe(1);
      const before = await store.ledger.balance(owner.accountId, 'live');

      for (const holdId of [settled, voided, reaped, 'hold_that_never_was']) {
        expect(await store.ledger.renewHold(holdId, 10 * MINUTE)).toBe(false);
      }
      expect(await store.ledger.balance(owner.accountId, 'live')).toEqual(before);
      expect(before).toMatchObject({ purchased: 96, reserved: 0 });
      expect(await store.ledger.countPendingHolds(owner.accountId)).toBe(0);
      expect(await store.ledger.settle({ holdId: reaped, amount: 1, usage: usage() })).toMatchObject({ status: 'already_final' });
      expect(await store.ledger.audit()).toEqual({ checks: 5, findings: [] });
    });

    it('refuses a lease that is not a whole number of milliseconds >= 0, leaving the hold as it was', async () => {
      const { store, clock } = h();
      const owner = await seedAccount(store);
      await store.ledger.grant(purchased(owner, 100));
      const holdId = await hold(store, owner, 10, MINUTE);
      for (const leaseMs of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
        await expect(store.ledger.renewHold(holdId, leaseMs)).rejects.toMatchObject({ code: 'invalid_input' });
      }
      clock.set(T0 + MINUTE);
      expect(await store.ledger.reapExpiredHolds(10)).toBe(1);
    });
  });
}
