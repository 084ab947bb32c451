import { describe, expect, it } from 'vitest';
import type { Environment, Store, UsageEventQuery, UsageEventRow, UsageRecord } from '../../../src/store/types.js';
import { DAY, HOUR, type OpenStore, type Seeded, hold, newKey, purchased, seedAccount, usage, useFreshStore } from './harness.js';

const MAR_1 = Date.UTC(2025, 2, 1);

async function spend(store: Store, owner: Seeded, credits: number, record: Partial<UsageRecord> = {}): Promise<void> {
  const holdId = await hold(store, owner, credits + 5);
  await store.ledger.settle({ holdId, amount: credits, usage: usage(record) });
}

function query(overrides: Partial<UsageEventQuery> = {}): UsageEventQuery {
  return { startMs: MAR_1, endMs: MAR_1 + 31 * DAY, accountId: null, environment: null, after: null, limit: 1_000, ...overrides };
}

/** Every page in turn, each after the last row of the one before, until a short page. */
async function allPages(store: Store, q: UsageEventQuery): Promise<UsageEventRow[][]> {
  const pages: UsageEventRow[][] = [];
  let after = q.after;
  for (;;) {
    const page = await store.usage.events({ ...q, after });
    pages.push(page);
    const last = page.at(-1);
    if (page.length < q.limit || last === undefined) return pages;
    after = { at: last.at, id: last.id };
  }
}

function inOrder(rows: readonly UsageEventRow[]): boolean {
  return rows.every((row, i) => i === 0 || row.at > rows[i - 1]!.at || (row.at === rows[i - 1]!.at && row.id > rows[i - 1]!.id));
}

export function usageEventCases(open: OpenStore): void {
  describe('usage events (export)', () => {
    const h = useFreshStore(open);

    it('returns each settled request of the period once, with every field, in (time, id) order', async () => {
      const { store, clock } = h();
      const owner = await seedAccount(store);
      await store.ledger.grant(purchased(owner, 10_000));
      clock.set(MAR_1 - 1);
      await spend(store, owner, 1, { requestId: 'req_before' });
      clock.set(MAR_1);
      await spend(store, owner, 7, {
        requestId: 'req_first',
        model: 'svc-smart',
        routedProvider: 'openai',
        routedModel: 'openai/gpt-4.1, "mini"\nv2',
        promptTokens: 900,
        completionTokens: 300,
        cachedTokens: 800,
        reasoningTokens: 250,
        outcome: 'client_closed',
        latencyMs: 1234.4,
        shortfallCredits: 3,
      });
      // A voided hold is no usage event.
      await store.ledger.void(await hold(store, owner, 5));
      clock.set(MAR_1 + DAY + HOUR);
      await spend(store, owner, 2, { requestId: 'req_second' });
      clock.set(MAR_1 + 2 * DAY - 1);
      await spend(store, owner, 3, { requestId: 'req_last' });
      clock.set(MAR_1 + 2 * DAY);
      await spend(store, owner, 4, { requestId: 'req_after' });

      const rows = await store.usage.events(query({ endMs: MAR_1 + 2 * DAY }));
      expect(rows.map((row) => row.requestId)).toEqual(['req_first', 'req_second', 'req_last']);
      expect(inOrder(rows)).toBe(true);
      expect(rows[0]).toEqual({
        id: expect.any(Number),
        requestId: 'req_first',
        at: MAR_1,
        accountId: owner.accountId,
        environment: 'live',
        keyId: owner.keyId,
        model: 'svc-smart',
        routedProvider: 'openai',
        routedModel: 'openai/gpt-4.1, "mini"\nv2',
        promptTokens: 900,
        completionTokens: 300,
        cachedTokens: 800,
        reasoningTokens: 250,
        credits: 7,
        shortfallCredits: 3,
        outcome: 'client_closed',
        latencyMs: 1234,
      });
      expect(Number.isSafeInteger(rows[0]!.id) && rows[0]!.id > 0).toBe(true);
      expect(rows.map((row) => row.credits)).toEqual([7, 2, 3]);
      // The credits of the period are those of the rollup for the same UTC days.
      const rollup = await store.usage.rollup({
        accountId: owner.accountId,
        environment: 'live',
        startDay: '2025-03-01',
        endDay: '2025-03-02',
        model: null,
      });
      expect(rollup.reduce((sum, row) => sum + row.credits, 0)).toBe(12);
      expect(await store.usage.events(query({ startMs: MAR_1 + 3 * DAY }))).toEqual([]);
      expect(await store.usage.events(query({ startMs: MAR_1 + DAY, endMs: MAR_1 + DAY }))).toEqual([]);
    });

    it('filters by account, by environment and by both', async () => {
      const { store } = h();
      const a = await seedAccount(store);
      const b = await seedAccount(store);
      const aTestKey = await store.keys.insertKey(newKey(a.accountId, { environment: 'test' }));
      const aTest: Seeded = { accountId: a.accountId, keyId: aTestKey.id, environment: 'test' };
      for (const owner of [a, b, aTest]) await store.ledger.grant(purchased(owner, 1_000));
      await spend(store, a, 1, { requestId: 'a_live_1' });
      await spend(store, b, 2, { requestId: 'b_live' });
      await spend(store, aTest, 3, { requestId: 'a_test' });
      await spend(store, a, 4, { requestId: 'a_live_2' });

      const ids = async (accountId: string | null, environment: Environment | null) =>
        (await store.usage.events(query({ startMs: 0, endMs: 2 ** 50, accountId, environment }))).map((row) => row.requestId);
      expect(await ids(null, null)).toEqual(['a_live_1', 'b_live', 'a_test', 'a_live_2']);
      expect(await ids(a.accountId, null)).toEqual(['a_live_1', 'a_test', 'a_live_2']);
      expect(await ids(null, 'test')).toEqual(['a_test']);
      expect(await ids(a.accountId, 'live')).toEqual(['a_live_1', 'a_live_2']);
      expect(await ids(b.accountId, 'test')).toEqual([]);
      expect(await ids('acct_unknown', null)).toEqual([]);
      const [row] = await store.usage.events(query({ startMs: 0, endMs: 2 ** 50, environment: 'test' }));
      expect(row).toMatchObject({ accountId: a.accountId, environment: 'test', keyId: aTestKey.id, credits: 3 });
    });

    it('pages through ties and filters: every row exactly once, in order, whatever the page size', async () => {
      const { store, clock } = h();
      const a = await seedAccount(store);
      const b = await seedAccount(store);
      await store.ledger.grant(purchased(a, 100_000));
      await store.ledger.grant(purchased(b, 100_000));
      clock.set(MAR_1 + HOUR);
      // 30 events over 6 instants, 5 per instant (ties broken by id), the two accounts interleaved.
      for (let instant = 0; instant < 6; instant += 1) {
        for (let i = 0; i < 5; i += 1) await spend(store, i % 2 === 0 ? a : b, 1, { requestId: `req_${instant}_${i}` });
        clock.advance(7 * HOUR);
      }
      const whole = await store.usage.events(query());
      expect(whole).toHaveLength(30);
      expect(inOrder(whole)).toBe(true);
      expect(new Set(whole.map((row) => row.id)).size).toBe(30);
      for (const limit of [1, 2, 4, 5, 7, 30, 31]) {
        const pages = await allPages(store, query({ limit }));
        expect(pages.every((page) => page.length <= limit)).toBe(true);
        expect(pages.flat()).toEqual(whole);
        // A last full page is followed by one empty page, never by a repeat.
        expect(pages).toHaveLength(Math.floor(30 / limit) + 1);
      }
      const ofA = await store.usage.events(query({ accountId: a.accountId }));
      expect(ofA).toEqual(whole.filter((row) => row.accountId === a.accountId));
      expect((await allPages(store, query({ accountId: a.accountId, limit: 4 }))).flat()).toEqual(ofA);
      // Starting after a row in the middle of a tie: the rest of the tie, then the later instants.
      const cut = whole[12]!;
      expect(await store.usage.events(query({ after: { at: cut.at, id: cut.id } }))).toEqual(whole.slice(13));
      // The bounds hold on every page: a narrower period pages through its own rows only.
      const narrow = query({ startMs: whole[5]!.at, endMs: whole[20]!.at, limit: 3 });
      expect((await allPages(store, narrow)).flat()).toEqual(whole.slice(5, 20));
    });

    it('sees events settled after the previous page at their place in the order', async () => {
      const { store, clock } = h();
      const owner = await seedAccount(store);
      await store.ledger.grant(purchased(owner, 1_000));
      clock.set(MAR_1 + HOUR);
      await spend(store, owner, 1, { requestId: 'one' });
      await spend(store, owner, 1, { requestId: 'two' });
      const first = await store.usage.events(query({ limit: 2 }));
      clock.advance(1);
      await spend(store, owner, 1, { requestId: 'three' });
      const last = first.at(-1)!;
      const next = await store.usage.events(query({ limit: 2, after: { at: last.at, id: last.id } }));
      expect(next.map((row) => row.requestId)).toEqual(['three']);
    });

    it('refuses a malformed page request', async () => {
      const { store } = h();
      for (const bad of [
        query({ limit: 0 }),
        query({ limit: 10_001 }),
        query({ limit: 1.5 }),
        query({ startMs: 10, endMs: 9 }),
        query({ startMs: Number.NaN }),
        query({ after: { at: 1, id: 0.5 } }),
      ]) {
        await expect(store.usage.events(bad)).rejects.toMatchObject({ code: 'invalid_input' });
      }
      expect(await store.usage.events(query({ limit: 10_000 }))).toEqual([]);
    });
  });
}
