import { describe, expect, it } from 'vitest';
import { MINUTE, type OpenStore, T0, hold, purchased, seedAccount, usage, useFreshStore } from './harness.js';

export function settleCases(open: OpenStore): void {
  describe('settle, void and the reaper', () => {
    const h = useFreshStore(open);

    it('charges at most the held amount and never less than zero', async () => {
      const { store } = h();
      const owner = await seedAccount(store);
      await store.ledger.grant(purchased(owner, 100));
      const over = await hold(store, owner, 10);
      expect(await store.ledger.settle({ holdId: over, amount: 25, usage: usage() })).toEqual({
        status: 'settled',
        charged: 10,
        balance: { accountId: owner.accountId, environment: 'live', earned: 0, earnedNextExpiry: null, purchased: 90, reserved: 0 },
      });
      const negative = await hold(store, owner, 10);
      expect(await store.ledger.settle({ holdId: negative, amount: -3, usage: usage() })).toMatchObject({
        status: 'settled',
        charged: 0,
        balance: { purchased: 90, reserved: 0 },
      });
    });

    it('finalizes a hold exactly once', async () => {
      const { store } = h();
      const owner = await seedAccount(store);
      await store.ledger.grant(purchased(owner, 100));
      const settled = await hold(store, owner, 10);
      expect(await store.ledger.settle({ holdId: settled, amount: 4, usage: usage() })).toMatchObject({ status: 'settled' });
      const afterSettle = await store.ledger.balance(owner.accountId, 'live');
      expect(await store.ledger.settle({ holdId: settled, amount: 10, usage: usage() })).toEqual({
        status: 'already_final',
        charged: 4,
        voided: false,
        balance: afterSettle,
      });
      expect(await store.ledger.void(settled)).toBe(false);
      expect(await store.ledger.balance(owner.accountId, 'live')).toEqual(afterSettle);

      const voided = await hold(store, owner, 10);
      expect(await store.ledger.void(voided)).toBe(true);
      expect(await store.ledger.void(voided)).toBe(false);
      expect(await store.ledger.settle({ holdId: voided, amount: 5, usage: usage() })).toEqual({
        status: 'already_final',
        charged: 0,
        voided: true,
        balance: afterSettle,
      });
      expect(afterSettle).toMatchObject({ purchased: 96, reserved: 0 });
      // Only the one settle was recorded as usage.
      const rows = await store.usage.rollup({ accountId: owner.accountId, environment: 'live', startDay: '2025-01-15', endDay: '2025-01-15', model: null });
      expect(rows).toEqual([expect.objectContaining({ requests: 1, credits: 4 })]);
    });

    it('answers a settle retried after its reply was lost with the first charge, a zero one included', async () => {
      const { store } = h();
      const owner = await seedAccount(store);
      await store.ledger.grant(purchased(owner, 100));
      const full = await hold(store, owner, 10);
      const first = await store.ledger.settle({ holdId: full, amount: 10, usage: usage() });
      expect(first).toMatchObject({ status: 'settled', charged: 10 });
      // The retry carries the same amount (what the caller computed); a different one changes nothing either.
      for (const amount of [10, 3, 0]) {
        expect(await store.ledger.settle({ holdId: full, amount, usage: usage() })).toEqual({
          status: 'already_final',
          charged: 10,
          voided: false,
          balance: first.status === 'settled' ? first.balance : null,
        });
      }
      // Settled for nothing is not voided: the request happened and its usage event exists.
      const free = await hold(store, owner, 10);
      expect(await store.ledger.settle({ holdId: free, amount: 0, usage: usage() })).toMatchObject({ status: 'settled', charged: 0 });
      expect(await store.ledger.settle({ holdId: free, amount: 5, usage: usage() })).toMatchObject({
        status: 'already_final',
        charged: 0,
        voided: false,
      });
      const rows = await store.usage.rollup({ accountId: owner.accountId, environment: 'live', startDay: '2025-01-15', endDay: '2025-01-15', model: null });
      expect(rows).toEqual([expect.objectContaining({ requests: 2, credits: 10 })]);
    });

    it('settles and voids a hold drawn from more grants than one journal write holds, every credit accounted', async () => {
      const { store } = h();
      const owner = await seedAccount(store);
      for (let i = 0; i < 40; i++) await store.ledger.grant(purchased(owner, 3));
      // 100 credits from 34 grants; charging 50 spends 16 grants and part of a 17th, and releases 18 parts.
      const settled = await hold(store, owner, 100);
      expect(await store.ledger.settle({ holdId: settled, amount: 50, usage: usage() })).toMatchObject({
        status: 'settled',
        charged: 50,
        balance: { purchased: 70, reserved: 0 },
      });
      const voided = await hold(store, owner, 70);
      expect(await store.ledger.void(voided)).toBe(true);
      expect(await store.ledger.balance(owner.accountId, 'live')).toMatchObject({ purchased: 70, reserved: 0 });
      expect(await store.ledger.audit()).toMatchObject({ findings: [] });
    });

    it('knows nothing of unknown holds', async () => {
      const { store } = h();
      expect(await store.ledger.settle({ holdId: 'hold_missing', amount: 1, usage: usage() })).toEqual({ status: 'unknown_hold' });
      expect(await store.ledger.void('hold_missing')).toBe(false);
    });

    it('rejects a malformed settle without touching the hold', async () => {
      const { store } = h();
      const owner = await seedAccount(store);
      await store.ledger.grant(purchased(owner, 10));
      const holdId = await hold(store, owner, 5);
      await expect(store.ledger.settle({ holdId, amount: 1.5, usage: usage() })).rejects.toMatchObject({ code: 'invalid_input' });
      await expect(store.ledger.settle({ holdId, amount: 1, usage: usage({ promptTokens: -1 }) })).rejects.toMatchObject({
        code: 'invalid_input',
      });
      expect(await store.ledger.countPendingHolds(owner.accountId)).toBe(1);
      expect(await store.ledger.settle({ holdId, amount: 1, usage: usage({ latencyMs: 12.7 }) })).toMatchObject({ charged: 1 });
    });

    it('settles a hold whose lease ran out as long as the reaper has not voided it', async () => {
      const { store, clock } = h();
      const owner = await seedAccount(store);
      await store.ledger.grant(purchased(owner, 10));
      const holdId = await hold(store, owner, 5, MINUTE);
      clock.advance(2 * MINUTE);
      expect(await store.ledger.settle({ holdId, amount: 5, usage: usage() })).toMatchObject({ status: 'settled', charged: 5 });
      expect(await store.ledger.reapExpiredHolds(10)).toBe(0);
    });

    it('reaps only holds whose lease ran out, oldest lease first, up to the limit', async () => {
      const { store, clock } = h();
      const owner = await seedAccount(store);
      const other = await seedAccount(store);
      await store.ledger.grant(purchased(owner, 100));
      await store.ledger.grant(purchased(other, 100));
      const oldest = await hold(store, owner, 10, MINUTE);
      clock.advance(1_000);
      const middle = await hold(store, other, 10, MINUTE);
      clock.advance(1_000);
      const youngest = await hold(store, owner, 10, MINUTE);
      const longLease = await hold(store, owner, 10, 10 * MINUTE);
      expect(await store.ledger.countPendingHolds()).toBe(4);
      expect(await store.ledger.countPendingHolds(owner.accountId)).toBe(3);

      clock.set(T0 + MINUTE + 1_000); // the second lease ends exactly now: due
      expect(await store.ledger.reapExpiredHolds(10)).toBe(2);
      clock.advance(1_000);
      expect(await store.ledger.reapExpiredHolds(0)).toBe(0);
      expect(await store.ledger.reapExpiredHolds(1)).toBe(1);
      expect(await store.ledger.reapExpiredHolds(10)).toBe(0);
      for (const reaped of [oldest, middle, youngest]) {
        expect(await store.ledger.settle({ holdId: reaped, amount: 1, usage: usage() })).toMatchObject({
          status: 'already_final',
          charged: 0,
          voided: true,
        });
      }
      expect(await store.ledger.countPendingHolds()).toBe(1);
      expect(await store.ledger.balance(owner.accountId, 'live')).toMatchObject({ purchased: 90, reserved: 10 });
      expect(await store.ledger.balance(other.accountId, 'live')).toMatchObject({ purchased: 100, reserved: 0 });
      expect(await store.ledger.settle({ holdId: longLease, amount: 10, usage: usage() })).toMatchObject({ charged: 10 });
    });

    it('reaps the oldest lease first when limited', async () => {
      const { store, clock } = h();
      const owner = await seedAccount(store);
      await store.ledger.grant(purchased(owner, 100));
      const second = await hold(store, owner, 1, 2 * MINUTE);
      const first = await hold(store, owner, 1, MINUTE);
      clock.advance(3 * MINUTE);
      expect(await store.ledger.reapExpiredHolds(1)).toBe(1);
      expect(await store.ledger.void(first)).toBe(false);
      expect(await store.ledger.void(second)).toBe(true);
    });
  });
}
