import { describe, expect, it } from 'vitest';
import type { GrantInput, Store } from '../../../src/store/types.js';
import { DAY, HOUR, MINUTE, type OpenStore, T0, earned, hold, probeGrant, purchased, reserve, seedAccount, usage, useFreshStore } from './harness.js';

/** The reaper writes off what is left of expired earned grants (`expire` journal entries). */
export function expiryCases(open: OpenStore): void {
  describe('expiry of earned grants by the reaper', () => {
    const h = useFreshStore(open);

    const remaining = async (store: Store, grants: GrantInput[]) =>
      Promise.all(grants.map(async (grant) => (await probeGrant(store, grant)).remaining));

    it('writes off what is left of an expired earned grant at the next reap; no balance changes', async () => {
      const { store, clock } = h();
      const owner = await seedAccount(store);
      const promo = earned(owner, 10, T0 + HOUR, 'promo');
      const later = earned(owner, 5, T0 + DAY, 'later');
      const bought = purchased(owner, 7, 'bought');
      for (const grant of [promo, later, bought]) await store.ledger.grant(grant);
      const spent = await hold(store, owner, 3);
      await store.ledger.settle({ holdId: spent, amount: 3, usage: usage() });

      clock.set(T0 + HOUR - 1);
      expect(await store.ledger.reapExpiredHolds(10)).toBe(0);
      expect(await remaining(store, [promo, later, bought])).toEqual([7, 5, 7]);

      clock.set(T0 + HOUR); // expired at expiresAt exactly
      const before = await store.ledger.balance(owner.accountId, 'live');
      expect(before).toMatchObject({ earned: 5, earnedNextExpiry: T0 + DAY, purchased: 7, reserved: 0 });
      expect(await store.ledger.reapExpiredHolds(10)).toBe(0);
      expect(await store.ledger.balance(owner.accountId, 'live')).toEqual(before);
      expect(await remaining(store, [promo, later, bought])).toEqual([0, 5, 7]);
      expect(await store.ledger.audit()).toEqual({ checks: 5, findings: [] });

      // Written off once: a second reap finds nothing left (the audit would see a second entry).
      expect(await store.ledger.reapExpiredHolds(10)).toBe(0);
      expect(await remaining(store, [promo, later, bought])).toEqual([0, 5, 7]);
      expect(await store.ledger.audit()).toEqual({ checks: 5, findings: [] });
    });

    it('writes off what a hold taken before the expiry gives back after it, at the next reap', async () => {
      const { store, clock } = h();
      const owner = await seedAccount(store);
      const promo = earned(owner, 10, T0 + HOUR, 'promo');
      await store.ledger.grant(promo);
      const settled = await hold(store, owner, 6, 2 * HOUR);
      const voided = await hold(store, owner, 3, 2 * HOUR);

      clock.set(T0 + HOUR);
      expect(await store.ledger.reapExpiredHolds(10)).toBe(0); // leases not due: only the unheld credit goes
      expect(await remaining(store, [promo])).toEqual([0]);
      expect(await store.ledger.balance(owner.accountId, 'live')).toMatchObject({ earned: 0, reserved: 9 });

      // The held credits may still be spent; what comes back lands in the expired grant.
      expect(await store.ledger.settle({ holdId: settled, amount: 4, usage: usage() })).toMatchObject({ charged: 4 });
      expect(await store.ledger.void(voided)).toBe(true);
      expect(await remaining(store, [promo])).toEqual([5]);
      expect(await store.ledger.balance(owner.accountId, 'live')).toMatchObject({ earned: 0, earnedNextExpiry: null, reserved: 0 });
      expect(await store.ledger.audit()).toEqual({ checks: 5, findings: [] });

      expect(await store.ledger.reapExpiredHolds(10)).toBe(0);
      expect(await remaining(store, [promo])).toEqual([0]);
      expect(await store.ledger.audit()).toEqual({ checks: 5, findings: [] });
      expect(await reserve(store, owner, 1)).toEqual({ ok: false, reason: 'insufficient_credits', available: 0 });
    });

    it('writes off in the same reap what a reaped hold gives back to an expired grant', async () => {
      const { store, clock } = h();
      const owner = await seedAccount(store);
      const promo = earned(owner, 10, T0 + HOUR, 'promo');
      await store.ledger.grant(promo);
      await hold(store, owner, 8, 2 * HOUR);
      clock.set(T0 + 2 * HOUR);
      expect(await store.ledger.reapExpiredHolds(10)).toBe(1);
      expect(await remaining(store, [promo])).toEqual([0]);
      expect(await store.ledger.balance(owner.accountId, 'live')).toMatchObject({ earned: 0, reserved: 0 });
      expect(await store.ledger.audit()).toEqual({ checks: 5, findings: [] });
    });

    it('writes off at most `limit` grants per reap, lowest grant id first, besides the holds it voids', async () => {
      const { store, clock } = h();
      const owner = await seedAccount(store);
      const grants = [earned(owner, 1, T0 + HOUR, 'a'), earned(owner, 2, T0 + 2 * HOUR, 'b'), earned(owner, 3, T0 + HOUR, 'c')];
      for (const grant of grants) await store.ledger.grant(grant);
      await store.ledger.grant(purchased(owner, 5));
      // Draws from `a` (soonest expiry, then oldest) and `c` before `b`: 1 + 3, then 1 of `b`.
      await hold(store, owner, 5, MINUTE);
      clock.set(T0 + 2 * HOUR);
      expect(await store.ledger.reapExpiredHolds(0)).toBe(0);
      expect(await remaining(store, grants)).toEqual([0, 1, 0]);

      expect(await store.ledger.reapExpiredHolds(2)).toBe(1);
      expect(await remaining(store, grants)).toEqual([0, 0, 3]);
      expect(await store.ledger.reapExpiredHolds(2)).toBe(0);
      expect(await remaining(store, grants)).toEqual([0, 0, 0]);
      expect(await store.ledger.balance(owner.accountId, 'live')).toMatchObject({ earned: 0, purchased: 5, reserved: 0 });
      expect(await store.ledger.audit()).toEqual({ checks: 5, findings: [] });
    });
  });
}
