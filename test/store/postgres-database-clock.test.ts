/**
 * The path production takes on PostgreSQL: the store's clock is not a test's hand-moved one, so a hold's
 * lease, which holds are due, which earned grants and stored responses have expired are judged by the
 * database server's own time inside the statements. Here the store's clock is 20 minutes ahead of the database (a gateway whose
 * machine clock stepped): none of those decisions may move. The conformance suite drives the other path
 * (a ManualClock decides), and its last case shows what the same reap does when a clock 20 minutes ahead
 * decides.
 */
import type postgres from 'postgres';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Clock, ManualClock } from '../../src/core/clock.js';
import type { Store } from '../../src/store/types.js';
import { earned, hold, purchased, reserve, seedAccount, type Seeded } from './cases/harness.js';
import { closeAdmin, createTestSchema, dropTestSchema, openPostgresStore, rawSql } from './postgres-harness.js';
import { createPostgresStore } from '../../src/store/postgres/postgres-store.js';
import { POSTGRES_URL } from './postgres-harness.js';

afterAll(closeAdmin);

const STEP_MS = 20 * 60_000;
/** A gateway whose machine clock stepped 20 minutes ahead: not `manual`, so the database decides. */
const steppedClock: Clock = { now: () => Date.now() + STEP_MS };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('postgres store on the database clock', () => {
  let schema: string;
  let store: Store;
  let raw: postgres.Sql;
  let owner: Seeded;

  beforeEach(async () => {
    schema = await createTestSchema();
    store = createPostgresStore({ url: POSTGRES_URL, clock: steppedClock, schema, max: 4 });
    await store.migrate();
    raw = await rawSql(schema);
    owner = await seedAccount(store);
  });

  afterEach(async () => {
    await raw.end();
    await store.close();
    await dropTestSchema(schema);
  });

  /** The database's time around an action, to bound what it computed. */
  async function bracket<T>(action: () => Promise<T>): Promise<{ result: T; from: number; to: number }> {
    const from = await store.serverTime();
    const result = await action();
    const to = await store.serverTime();
    return { result, from, to };
  }

  it("computes a hold's lease and day from the database's time, not the store's clock", async () => {
    await store.ledger.grant(purchased(owner, 100));
    const { result, from, to } = await bracket(() => reserve(store, owner, 10, 60_000));
    if (!result.ok) throw new Error(JSON.stringify(result));
    expect(result.leaseExpiresAt).toBeGreaterThanOrEqual(from + 60_000 - 1);
    expect(result.leaseExpiresAt).toBeLessThanOrEqual(to + 60_000);
    const [row] = await raw<{ day: string; created_at: number }[]>`SELECT day, created_at::float8 AS created_at FROM holds`;
    expect(row?.created_at).toBeGreaterThanOrEqual(from - 1);
    expect(row?.created_at).toBeLessThanOrEqual(to);
    expect(row?.day).toBe(new Date(row?.created_at ?? 0).toISOString().slice(0, 10));
  });

  it('does not reap a live hold for a clock 20 minutes ahead, and reaps it once the database says its lease ran out', async () => {
    await store.ledger.grant(purchased(owner, 100));
    const live = await hold(store, owner, 10, 60_000);
    const short = await hold(store, owner, 10, 600);
    expect(await store.ledger.reapExpiredHolds(1000)).toBe(0);
    expect(await store.ledger.countPendingHolds(owner.accountId)).toBe(2);

    const [lease] = await raw<{ ms: number }[]>`SELECT lease_expires_at::float8 AS ms FROM holds WHERE id = ${short}`;
    while ((await store.serverTime()) < (lease?.ms ?? 0)) await sleep(50);
    expect(await store.ledger.reapExpiredHolds(1000)).toBe(1);
    expect(await store.ledger.void(short)).toBe(false);
    expect(await store.ledger.void(live)).toBe(true);
    expect(await store.ledger.audit()).toEqual({ checks: 5, findings: [] });
  });

  it("renews a lease from the database's time", async () => {
    await store.ledger.grant(purchased(owner, 100));
    const holdId = await hold(store, owner, 10, 1_000);
    const { result, from, to } = await bracket(() => store.ledger.renewHold(holdId, 5_000));
    expect(result).toBe(true);
    const again = await reserve(store, owner, 10, 1_000, holdId);
    if (!again.ok) throw new Error(JSON.stringify(again));
    expect(again.leaseExpiresAt).toBeGreaterThanOrEqual(from + 5_000 - 1);
    expect(again.leaseExpiresAt).toBeLessThanOrEqual(to + 5_000);
    await sleep(1_100);
    expect(await store.ledger.reapExpiredHolds(1000)).toBe(0);
  });

  it('writes off an earned grant only once the database says it expired, and stamps the write-off with that time', async () => {
    const expiresAt = (await store.serverTime()) + 700;
    const promo = earned(owner, 50, expiresAt, 'promo');
    await store.ledger.grant(promo);
    await store.ledger.grant(purchased(owner, 5));
    expect(await store.ledger.reapExpiredHolds(1000)).toBe(0);
    expect((await store.ledger.grant(promo)).grant.remaining).toBe(50);

    while ((await store.serverTime()) < expiresAt) await sleep(50);
    expect(await store.ledger.reapExpiredHolds(1000)).toBe(0);
    expect((await store.ledger.grant(promo)).grant.remaining).toBe(0);
    const entries = await raw<{ amount: number; created_at: number }[]>`
      SELECT amount::float8 AS amount, created_at::float8 AS created_at FROM ledger_entries WHERE kind = 'expire'`;
    expect(entries).toHaveLength(1);
    expect(entries[0]?.amount).toBe(50);
    expect(entries[0]?.created_at).toBeGreaterThanOrEqual(expiresAt);
    expect(entries[0]?.created_at).toBeLessThan(expiresAt + STEP_MS / 2);
    expect(await store.ledger.audit()).toEqual({ checks: 5, findings: [] });
  });

  it('forgets a stored response only once the database says it expired', async () => {
    const now = await store.serverTime();
    const response = (id: string, expiresAt: number) => ({
      id,
      accountId: owner.accountId,
      environment: owner.environment,
      keyId: owner.keyId,
      createdAt: now,
      expiresAt,
      conversation: '[]',
      output: '[]',
      body: '{}',
    });
    // Both have expired for the store's clock (20 minutes ahead), neither for the database.
    const long = response('resp_long', now + 10 * 60_000);
    const short = response('resp_short', now + 700);
    await store.responses.save(long);
    await store.responses.save(short);
    expect(await store.responses.purgeExpired(1000)).toBe(0);
    expect(await store.responses.find(owner.accountId, 'live', short.id)).toEqual(short);

    while ((await store.serverTime()) < short.expiresAt) await sleep(50);
    expect(await store.responses.find(owner.accountId, 'live', short.id)).toBeNull();
    expect(await store.responses.delete(owner.accountId, 'live', short.id)).toBe(false);
    expect(await store.responses.purgeExpired(1000)).toBe(1);
    expect(await store.responses.delete(owner.accountId, 'live', long.id)).toBe(true);
  });

  it('never reaps a hold whose renewal succeeded, with renewals and reapers racing on several instances', async () => {
    await store.ledger.grant(purchased(owner, 10_000));
    const holds: string[] = [];
    for (let i = 0; i < 200; i++) holds.push(await hold(store, owner, 1, 0));
    const others = [0, 1].map(() => createPostgresStore({ url: POSTGRES_URL, clock: steppedClock, schema, max: 4 }));
    try {
      // Open every connection first, so neither side gets a head start.
      await Promise.all(others.flatMap((s) => [1, 2, 3, 4].map(() => s.serverTime())));
      let reaped = 0;
      const reaper = async (s: Store) => {
        for (let n = await s.ledger.reapExpiredHolds(3); n > 0; n = await s.ledger.reapExpiredHolds(3)) reaped += n;
      };
      // The reapers take the oldest leases first; the renewals start from the youngest, so they meet.
      const renewals = [...holds].reverse().map((id, i) => (others[i % 2] as Store).ledger.renewHold(id, 60_000));
      const [renewedReversed] = await Promise.all([Promise.all(renewals), reaper(others[0] as Store), reaper(others[1] as Store)]);
      const renewed = renewedReversed.reverse();
      const statuses = new Map(
        (await raw<{ id: string; status: string }[]>`SELECT id, status FROM holds`).map((r) => [r.id, r.status]),
      );
      holds.forEach((id, i) => expect(statuses.get(id)).toBe(renewed[i] ? 'pending' : 'voided'));
      expect(reaped).toBe([...statuses.values()].filter((s) => s === 'voided').length);
      const kept = renewed.filter(Boolean).length;
      console.log(`[renew race] ${kept} of ${holds.length} renewed in time, ${reaped} reaped`);
      expect(kept).toBeGreaterThan(0);
      expect(reaped).toBeGreaterThan(0);
      expect(await store.ledger.reapExpiredHolds(1000)).toBe(0);
      expect(await store.ledger.audit()).toEqual({ checks: 5, findings: [] });
    } finally {
      await Promise.all(others.map((s) => s.close()));
    }
  });

  it('contrast: a clock that decides (a test clock 20 minutes ahead) voids the live hold', async () => {
    const ahead = new ManualClock((await store.serverTime()) + STEP_MS);
    const decided = openPostgresStore(schema, ahead);
    try {
      await store.ledger.grant(purchased(owner, 100));
      await hold(store, owner, 10, 60_000);
      expect(await store.ledger.reapExpiredHolds(1000)).toBe(0);
      expect(await decided.ledger.reapExpiredHolds(1000)).toBe(1);
    } finally {
      await decided.close();
    }
  });
});
