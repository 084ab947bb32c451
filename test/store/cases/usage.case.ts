import { describe, expect, it } from 'vitest';
import { DAY, HOUR, type OpenStore, hold, purchased, seedAccount, usage, useFreshStore } from './harness.js';
import type { Store, UsageRecord } from '../../../src/store/types.js';
import type { Seeded } from './harness.js';

async function spend(store: Store, owner: Seeded, credits: number, record: Partial<UsageRecord>): Promise<void> {
  const holdId = await hold(store, owner, credits + 5);
  await store.ledger.settle({ holdId, amount: credits, usage: usage(record) });
}

export function usageCases(open: OpenStore): void {
  describe('usage rollup', () => {
    const h = useFreshStore(open);

    it('sums settled requests per UTC day and model, ordered by day then model', async () => {
      const { store, clock } = h();
      const owner = await seedAccount(store);
      const other = await seedAccount(store);
      await store.ledger.grant(purchased(owner, 10_000));
      await store.ledger.grant(purchased(other, 10_000));
      clock.set(Date.UTC(2025, 2, 1, 10));
      await spend(store, owner, 7, { model: 'svc-smart', promptTokens: 100, completionTokens: 50 });
      await spend(store, owner, 3, { model: 'svc-fast', promptTokens: 10, completionTokens: 5 });
      await spend(store, owner, 4, { model: 'svc-smart', promptTokens: 1, completionTokens: 2, outcome: 'client_closed' });
      await spend(store, other, 99, { model: 'svc-fast' });
      clock.advance(DAY);
      await spend(store, owner, 2, { model: 'svc-code', promptTokens: 8, completionTokens: 9 });
      clock.advance(2 * DAY);
      await spend(store, owner, 1, { model: 'svc-fast', promptTokens: 1, completionTokens: 1 });

      const query = { accountId: owner.accountId, environment: 'live' as const, model: null };
      expect(await store.usage.rollup({ ...query, startDay: '2025-03-01', endDay: '2025-03-04' })).toEqual([
        { day: '2025-03-01', model: 'svc-fast', requests: 1, promptTokens: 10, completionTokens: 5, cachedTokens: 0, reasoningTokens: 0, credits: 3 },
        { day: '2025-03-01', model: 'svc-smart', requests: 2, promptTokens: 101, completionTokens: 52, cachedTokens: 0, reasoningTokens: 0, credits: 11 },
        { day: '2025-03-02', model: 'svc-code', requests: 1, promptTokens: 8, completionTokens: 9, cachedTokens: 0, reasoningTokens: 0, credits: 2 },
        { day: '2025-03-04', model: 'svc-fast', requests: 1, promptTokens: 1, completionTokens: 1, cachedTokens: 0, reasoningTokens: 0, credits: 1 },
      ]);
      expect(await store.usage.rollup({ ...query, startDay: '2025-03-02', endDay: '2025-03-03' })).toEqual([
        { day: '2025-03-02', model: 'svc-code', requests: 1, promptTokens: 8, completionTokens: 9, cachedTokens: 0, reasoningTokens: 0, credits: 2 },
      ]);
      expect(
        (await store.usage.rollup({ ...query, model: 'svc-fast', startDay: '2025-02-01', endDay: '2025-03-31' })).map((row) => row.day),
      ).toEqual(['2025-03-01', '2025-03-04']);
      expect(await store.usage.rollup({ ...query, environment: 'test', startDay: '2025-03-01', endDay: '2025-03-04' })).toEqual([]);
      expect(await store.usage.rollup({ ...query, startDay: '2025-03-05', endDay: '2025-03-31' })).toEqual([]);
    });

    it('dates usage by the settle, not the reserve', async () => {
      const { store, clock } = h();
      const owner = await seedAccount(store);
      await store.ledger.grant(purchased(owner, 100));
      clock.set(Date.UTC(2025, 2, 1, 23, 59));
      const holdId = await hold(store, owner, 10, HOUR);
      clock.advance(2 * 60_000);
      await store.ledger.settle({ holdId, amount: 6, usage: usage({ model: 'svc-auto' }) });
      const rows = await store.usage.rollup({
        accountId: owner.accountId,
        environment: 'live',
        startDay: '2025-03-01',
        endDay: '2025-03-02',
        model: null,
      });
      expect(rows).toEqual([expect.objectContaining({ day: '2025-03-02', model: 'svc-auto', credits: 6 })]);
    });

    it('validates the shortfall like the other counts and keeps it out of the rollup', async () => {
      const { store } = h();
      const owner = await seedAccount(store);
      await store.ledger.grant(purchased(owner, 100));
      const holdId = await hold(store, owner, 10);
      for (const shortfallCredits of [-1, 1.5, Number.NaN]) {
        await expect(store.ledger.settle({ holdId, amount: 10, usage: usage({ shortfallCredits }) })).rejects.toMatchObject({
          code: 'invalid_input',
        });
      }
      expect(await store.ledger.countPendingHolds(owner.accountId)).toBe(1);
      // The upstream reported 250 credits of work on a 10-credit hold: 10 charged, 240 recorded as shortfall.
      expect(await store.ledger.settle({ holdId, amount: 250, usage: usage({ shortfallCredits: 240 }) })).toMatchObject({
        status: 'settled',
        charged: 10,
      });
      const rows = await store.usage.rollup({ accountId: owner.accountId, environment: 'live', startDay: '2000-01-01', endDay: '2999-12-31', model: null });
      expect(rows).toEqual([expect.objectContaining({ requests: 1, credits: 10 })]);
      expect(await store.ledger.audit()).toMatchObject({ findings: [] });
    });

    it('records cached and reasoning tokens, sums them per day and model, and validates them', async () => {
      const { store, clock } = h();
      const owner = await seedAccount(store);
      await store.ledger.grant(purchased(owner, 1_000));
      clock.set(Date.UTC(2025, 4, 1, 10));
      await spend(store, owner, 5, { model: 'svc-smart', promptTokens: 900, completionTokens: 300, cachedTokens: 800, reasoningTokens: 250 });
      await spend(store, owner, 5, { model: 'svc-smart', promptTokens: 100, completionTokens: 10, cachedTokens: 64 });
      // A record without them (an older caller) stores 0.
      await spend(store, owner, 1, { model: 'svc-fast', promptTokens: 1, completionTokens: 1 });
      const holdId = await hold(store, owner, 10);
      for (const bad of [{ cachedTokens: -1 }, { reasoningTokens: 1.5 }, { cachedTokens: Number.NaN }]) {
        await expect(store.ledger.settle({ holdId, amount: 1, usage: usage(bad) })).rejects.toMatchObject({ code: 'invalid_input' });
      }
      const rows = await store.usage.rollup({ accountId: owner.accountId, environment: 'live', startDay: '2025-05-01', endDay: '2025-05-01', model: null });
      expect(rows).toEqual([
        { day: '2025-05-01', model: 'svc-fast', requests: 1, promptTokens: 1, completionTokens: 1, cachedTokens: 0, reasoningTokens: 0, credits: 1 },
        { day: '2025-05-01', model: 'svc-smart', requests: 2, promptTokens: 1000, completionTokens: 310, cachedTokens: 864, reasoningTokens: 250, credits: 10 },
      ]);
      expect(await store.ledger.audit()).toMatchObject({ findings: [] });
    });

    it('counts voided holds nowhere', async () => {
      const { store } = h();
      const owner = await seedAccount(store);
      await store.ledger.grant(purchased(owner, 100));
      await store.ledger.void(await hold(store, owner, 10));
      const rows = await store.usage.rollup({ accountId: owner.accountId, environment: 'live', startDay: '2000-01-01', endDay: '2999-12-31', model: null });
      expect(rows).toEqual([]);
    });
  });
}
