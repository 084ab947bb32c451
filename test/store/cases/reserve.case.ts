import { describe, expect, it } from 'vitest';
import {
  DAY,
  HOUR,
  MINUTE,
  type OpenStore,
  T0,
  earned,
  hold,
  probeGrant,
  purchased,
  reserve,
  seedAccount,
  usage,
  useFreshStore,
} from './harness.js';

export function reserveCases(open: OpenStore): void {
  describe('reserve', () => {
    const h = useFreshStore(open);

    it('draws earned credits soonest expiry first, then purchased oldest first, and settles in that order', async () => {
      const { store, clock } = h();
      const owner = await seedAccount(store);
      const later = earned(owner, 10, T0 + 2 * DAY, 'later');
      const sooner = earned(owner, 10, T0 + DAY, 'sooner');
      const oldPurchase = purchased(owner, 10, 'old');
      await store.ledger.grant(later);
      await store.ledger.grant(oldPurchase);
      await store.ledger.grant(sooner);
      clock.advance(MINUTE);
      const newPurchase = purchased(owner, 10, 'new');
      await store.ledger.grant(newPurchase);

      const holdId = await hold(store, owner, 25);
      const remaining = async () =>
        Promise.all([sooner, later, oldPurchase, newPurchase].map(async (g) => (await probeGrant(store, g)).remaining));
      expect(await remaining()).toEqual([0, 0, 5, 10]);

      // Spent in allocation order: all of `sooner`, 2 of `later`; the rest goes back.
      const settled = await store.ledger.settle({ holdId, amount: 12, usage: usage() });
      expect(settled).toMatchObject({ status: 'settled', charged: 12 });
      expect(await remaining()).toEqual([0, 8, 10, 10]);
      expect(await store.ledger.balance(owner.accountId, 'live')).toMatchObject({
        earned: 8,
        earnedNextExpiry: T0 + 2 * DAY,
        purchased: 20,
        reserved: 0,
      });
    });

    it('lets a hold taken before expiry spend the expired credits; what it releases expires', async () => {
      const { store, clock } = h();
      const owner = await seedAccount(store);
      const promo = earned(owner, 10, T0 + HOUR, 'promo');
      await store.ledger.grant(promo);
      const spent = await hold(store, owner, 6, 2 * HOUR);
      const voided = await hold(store, owner, 4, 2 * HOUR);
      clock.advance(HOUR);
      expect(await store.ledger.balance(owner.accountId, 'live')).toMatchObject({ earned: 0, reserved: 10 });

      expect(await store.ledger.settle({ holdId: spent, amount: 4, usage: usage() })).toMatchObject({
        status: 'settled',
        charged: 4,
        balance: { earned: 0, earnedNextExpiry: null, purchased: 0, reserved: 4 },
      });
      expect(await store.ledger.void(voided)).toBe(true);
      expect(await store.ledger.balance(owner.accountId, 'live')).toMatchObject({ earned: 0, reserved: 0 });
      // 6 credits went back to the grant, but the grant has expired: they are not available (the next reap
      // writes them off, expiry.case.ts).
      expect((await probeGrant(store, promo)).remaining).toBe(6);
      expect(await reserve(store, owner, 1)).toEqual({ ok: false, reason: 'insufficient_credits', available: 0 });
    });

    it('refuses unknown and revoked keys', async () => {
      const { store } = h();
      const owner = await seedAccount(store);
      await store.ledger.grant(purchased(owner, 10));
      expect(await reserve(store, { ...owner, keyId: 'key_missing' }, 1)).toEqual({ ok: false, reason: 'key_inactive' });
      await store.keys.revokeKey(owner.keyId);
      expect(await reserve(store, owner, 1)).toEqual({ ok: false, reason: 'key_inactive' });
      expect(await store.ledger.countPendingHolds(owner.accountId)).toBe(0);
    });

    it('writes nothing when credits are short', async () => {
      const { store } = h();
      const owner = await seedAccount(store, { dailyCreditLimit: 11 });
      const grant = purchased(owner, 10, 'only');
      await store.ledger.grant(grant);
      await store.ledger.grant(earned(owner, 3, T0 - 1));
      const before = await store.ledger.balance(owner.accountId, 'live');

      expect(await reserve(store, owner, 11, MINUTE, 'hold_short')).toEqual({
        ok: false,
        reason: 'insufficient_credits',
        available: 10,
      });
      expect(await store.ledger.balance(owner.accountId, 'live')).toEqual(before);
      expect((await probeGrant(store, grant)).remaining).toBe(10);
      expect(await store.ledger.countPendingHolds(owner.accountId)).toBe(0);
      expect(await store.ledger.settle({ holdId: 'hold_short', amount: 1, usage: usage() })).toEqual({
        status: 'unknown_hold',
      });
      // Neither the daily counter nor the hold id were used up.
      await store.ledger.grant(purchased(owner, 1));
      expect(await reserve(store, owner, 11, MINUTE, 'hold_short')).toMatchObject({ ok: true, amount: 11 });
    });

    it('holds once per hold id', async () => {
      const { store, clock } = h();
      const owner = await seedAccount(store);
      await store.ledger.grant(purchased(owner, 50));
      const first = await reserve(store, owner, 20, MINUTE, 'hold_same');
      clock.advance(1_000);
      const again = await reserve(store, owner, 30, 5 * MINUTE, 'hold_same');
      expect(first).toEqual({ ok: true, holdId: 'hold_same', amount: 20, leaseExpiresAt: T0 + MINUTE, status: 'pending' });
      expect(again).toEqual(first);
      expect(await store.ledger.balance(owner.accountId, 'live')).toMatchObject({ purchased: 30, reserved: 20 });
      expect(await store.ledger.countPendingHolds()).toBe(1);
    });

    it('tells a caller reserving a final hold again that it is final (a reserve retried after a lost reply)', async () => {
      const { store, clock } = h();
      const owner = await seedAccount(store);
      await store.ledger.grant(purchased(owner, 50));
      const settled = await reserve(store, owner, 20, MINUTE, 'hold_settled');
      await store.ledger.settle({ holdId: 'hold_settled', amount: 7, usage: usage() });
      const voided = await reserve(store, owner, 10, MINUTE, 'hold_voided');
      await store.ledger.void('hold_voided');
      const reaped = await reserve(store, owner, 5, MINUTE, 'hold_reaped');
      clock.advance(MINUTE);
      expect(await store.ledger.reapExpiredHolds(10)).toBe(1);

      expect(await reserve(store, owner, 20, MINUTE, 'hold_settled')).toEqual({ ...settled, status: 'settled' });
      expect(await reserve(store, owner, 10, MINUTE, 'hold_voided')).toEqual({ ...voided, status: 'voided' });
      expect(await reserve(store, owner, 5, MINUTE, 'hold_reaped')).toEqual({ ...reaped, status: 'voided' });
      // Nothing was held again.
      expect(await store.ledger.balance(owner.accountId, 'live')).toMatchObject({ purchased: 43, reserved: 0 });
      expect(await store.ledger.countPendingHolds()).toBe(0);
    });

    it('rejects malformed reserves', async () => {
      const { store } = h();
      const owner = await seedAccount(store);
      await store.ledger.grant(purchased(owner, 50));
      await expect(reserve(store, owner, 0)).rejects.toMatchObject({ code: 'invalid_input' });
      await expect(reserve(store, owner, 2.5)).rejects.toMatchObject({ code: 'invalid_input' });
      await expect(reserve(store, owner, 5, -1)).rejects.toMatchObject({ code: 'invalid_input' });
      expect(await store.ledger.countPendingHolds()).toBe(0);
    });
  });

  describe('daily cap', () => {
    const h = useFreshStore(open);

    it('counts held and settled credits of the UTC day against the key limit', async () => {
      const { store } = h();
      const owner = await seedAccount(store, { dailyCreditLimit: 100 });
      await store.ledger.grant(purchased(owner, 1_000));
      const big = await hold(store, owner, 60);
      expect(await reserve(store, owner, 50)).toEqual({
        ok: false,
        reason: 'daily_limit_exceeded',
        limit: 100,
        committedToday: 60,
      });
      // Settling below the hold gives the difference back to the day.
      await store.ledger.settle({ holdId: big, amount: 20, usage: usage() });
      expect((await reserve(store, owner, 50)).ok).toBe(true);
      expect(await reserve(store, owner, 31)).toEqual({
        ok: false,
        reason: 'daily_limit_exceeded',
        limit: 100,
        committedToday: 70,
      });
      expect((await reserve(store, owner, 30)).ok).toBe(true);
    });

    it('gives voided and reaped holds back to the day', async () => {
      const { store, clock } = h();
      const owner = await seedAccount(store, { dailyCreditLimit: 10 });
      await store.ledger.grant(purchased(owner, 100));
      const voided = await hold(store, owner, 10, HOUR);
      await store.ledger.void(voided);
      await hold(store, owner, 10, MINUTE);
      expect(await reserve(store, owner, 1)).toMatchObject({ ok: false, reason: 'daily_limit_exceeded' });
      clock.advance(MINUTE);
      expect(await store.ledger.reapExpiredHolds(10)).toBe(1);
      expect((await reserve(store, owner, 10)).ok).toBe(true);
    });

    it('starts again on a new UTC day and settles old holds against their own day', async () => {
      const { store, clock } = h();
      const owner = await seedAccount(store, { dailyCreditLimit: 100 });
      await store.ledger.grant(purchased(owner, 1_000));
      clock.set(Date.UTC(2025, 0, 15, 23, 59, 0));
      const yesterday = await hold(store, owner, 100, HOUR);
      expect(await reserve(store, owner, 1)).toMatchObject({ ok: false, committedToday: 100 });
      clock.set(Date.UTC(2025, 0, 16, 0, 0, 0));
      expect((await reserve(store, owner, 90)).ok).toBe(true);
      // Releasing yesterday's hold frees yesterday's budget, not today's.
      await store.ledger.settle({ holdId: yesterday, amount: 0, usage: usage() });
      expect(await reserve(store, owner, 20)).toEqual({
        ok: false,
        reason: 'daily_limit_exceeded',
        limit: 100,
        committedToday: 90,
      });
      expect((await reserve(store, owner, 10)).ok).toBe(true);
    });

    it('does not cap keys without a limit', async () => {
      const { store } = h();
      const owner = await seedAccount(store, { dailyCreditLimit: null });
      await store.ledger.grant(purchased(owner, 10_000));
      expect((await reserve(store, owner, 10_000)).ok).toBe(true);
    });

    it('a limit of zero refuses everything', async () => {
      const { store } = h();
      const owner = await seedAccount(store, { dailyCreditLimit: 0 });
      await store.ledger.grant(purchased(owner, 10));
      expect(await reserve(store, owner, 1)).toEqual({
        ok: false,
        reason: 'daily_limit_exceeded',
        limit: 0,
        committedToday: 0,
      });
    });
  });
}
