import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import type { ReserveResult, SettleResult, Store } from '../../src/store/types.js';
import { DAY, HOUR, MINUTE, T0, earned, newKey, purchased, seedAccount, usage } from './cases/harness.js';
import { closeAdmin, createTestSchema, dropTestSchema, openPostgresStore, rawSql } from './postgres-harness.js';

afterAll(closeAdmin);

/** Deterministic randomness, so a failing interleaving of choices can be rerun (the timing still varies). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const OPERATIONS = 1_000;
const WORKERS = 24;
const LEASE = 10 * MINUTE;
const DAILY_CAP = 400;

/**
 * Separate stores with separate pools on one schema stand for separate gateway processes: nothing is shared
 * between them but the database. Each test gets its own schema.
 */
describe('postgres: several instances on one account', () => {
  let schema: string;
  let clock: ManualClock;
  let instances: Store[];

  beforeEach(async () => {
    schema = await createTestSchema();
    clock = new ManualClock(T0);
    instances = [0, 1, 2].map(() => openPostgresStore(schema, clock, 8));
    await Promise.all(instances.map((store) => store.migrate()));
  });

  afterEach(async () => {
    await Promise.all(instances.map((store) => store.close()));
    await dropTestSchema(schema);
  });

  const instance = (index: number): Store => instances[index % instances.length]!;

  it(`${OPERATIONS} concurrent reserve/settle/void operations never overdraw, charge twice or leave a hold`, async () => {
    const first = instance(0);
    const owner = await seedAccount(first);
    // Several keys on the one account: reserves of one key queue on its key row, those of different keys
    // meet only on the account's grants, which is what must keep the balance whole.
    const keys = [owner.keyId];
    for (let i = 0; i < 5; i++) keys.push((await first.keys.insertKey(newKey(owner.accountId))).id);
    const capped = await first.keys.insertKey(newKey(owner.accountId, { dailyCreditLimit: DAILY_CAP }));
    const granted = 2_000;
    await first.ledger.grant(earned(owner, 500, T0 + DAY));
    await first.ledger.grant(purchased(owner, 1_500));

    const rand = random(20_251_122);
    const outcomes = { reserved: 0, insufficient: 0, capped: 0, settled: 0, voided: 0, abandoned: 0, charged: 0, doubleEnds: 0 };
    const countEnd = (result: SettleResult | boolean) => {
      if (result === true) outcomes.voided += 1;
      if (typeof result === 'object' && result.status === 'settled') {
        outcomes.settled += 1;
        outcomes.charged += result.charged;
      }
    };
    let observedNegative: unknown = null;
    let samples = 0;
    let running = true;
    const sampler = (async () => {
      while (running) {
        const balance = await instance(2).ledger.balance(owner.accountId, 'live');
        samples += 1;
        if (balance.earned < 0 || balance.purchased < 0 || balance.reserved < 0) observedNegative = balance;
      }
    })();

    let next = 0;
    const worker = async (workerId: number) => {
      for (let op = next++; running && op < OPERATIONS; op = next++) {
        const via = instance(workerId + op);
        const keyId = rand() < 0.3 ? capped.id : keys[Math.floor(rand() * keys.length)]!;
        const amount = 1 + Math.floor(rand() * 12);
        const result: ReserveResult = await via.ledger.reserve({ holdId: `hold_${op}`, keyId, amount, leaseMs: LEASE });
        if (!result.ok) {
          if (result.reason === 'insufficient_credits') outcomes.insufficient += 1;
          else if (result.reason === 'daily_limit_exceeded') outcomes.capped += 1;
          else throw new Error(`unexpected refusal ${JSON.stringify(result)}`);
          continue;
        }
        outcomes.reserved += 1;
        const cost = Math.floor(rand() * (amount + 4));
        const choice = rand();
        const settle = (store: Store) => store.ledger.settle({ holdId: result.holdId, amount: cost, usage: usage() });
        if (choice < 0.55) {
          countEnd(await settle(instance(op + 1)));
        } else if (choice < 0.7) {
          // The same hold ended through two instances at once (a retry racing the original, a settle
          // racing a void): exactly one of them may win.
          const ends = await Promise.all([settle(instance(op + 1)), rand() < 0.5 ? settle(instance(op + 2)) : instance(op + 2).ledger.void(result.holdId)]);
          ends.forEach(countEnd);
          const winners = ends.filter((end) => end === true || (typeof end === 'object' && end.status === 'settled'));
          expect(winners).toHaveLength(1);
          outcomes.doubleEnds += 1;
        } else if (choice < 0.9) {
          countEnd(await instance(op + 2).ledger.void(result.holdId));
        } else {
          outcomes.abandoned += 1; // its gateway "died": the reaper ends it
        }
      }
    };
    const workers = Array.from({ length: WORKERS }, (_, id) => worker(id));
    try {
      await Promise.all(workers);
    } finally {
      // On a failure too: nothing may still be talking to the stores when afterEach closes them.
      running = false;
      await Promise.allSettled([...workers, sampler]);
    }
    await sampler;

    // After the lease, the reapers of all three instances drain the abandoned holds together.
    clock.advance(LEASE);
    const reap = async (store: Store) => {
      let total = 0;
      for (let n = await store.ledger.reapExpiredHolds(7); n > 0; n = await store.ledger.reapExpiredHolds(7)) total += n;
      return total;
    };
    const reaped = (await Promise.all(instances.map(reap))).reduce((sum, n) => sum + n, 0);

    expect(observedNegative).toBeNull();
    expect(samples).toBeGreaterThan(0);
    expect(reaped).toBe(outcomes.abandoned);
    expect(outcomes.reserved).toBe(outcomes.settled + outcomes.voided + outcomes.abandoned);
    expect(outcomes.insufficient).toBeGreaterThan(0);
    expect(outcomes.capped).toBeGreaterThan(0);
    expect(await instance(1).ledger.countPendingHolds()).toBe(0);

    const balance = await instance(1).ledger.balance(owner.accountId, 'live');
    expect(balance.reserved).toBe(0);
    expect(balance.earned + balance.purchased).toBe(granted - outcomes.charged);

    const raw = await rawSql(schema);
    try {
      const [usageTotal] = await raw<{ credits: string; events: string }[]>`
        SELECT COALESCE(SUM(credits), 0)::text AS credits, COUNT(*)::text AS events FROM usage_events`;
      expect(Number(usageTotal?.credits)).toBe(outcomes.charged);
      expect(Number(usageTotal?.events)).toBe(outcomes.settled);
      const [cap] = await raw<{ committed: string }[]>`SELECT committed::text FROM key_daily_usage WHERE key_id = ${capped.id}`;
      expect(Number(cap?.committed)).toBeLessThanOrEqual(DAILY_CAP);
    } finally {
      await raw.end();
    }
    expect(await instance(2).ledger.audit()).toEqual({ checks: 5, findings: [] });
    console.info('postgres concurrency', { ...outcomes, reaped, balanceSamples: samples });
  });

  it('a revocation through one instance refuses the very next reserve through every other', async () => {
    const owner = await seedAccount(instance(0));
    await instance(0).ledger.grant(purchased(owner, 1_000_000));
    let stop = false;
    let attempt = 0;
    let admitted = 0;
    const hammer = async (store: Store) => {
      while (!stop) {
        const result = await store.ledger.reserve({ holdId: `race_${attempt++}`, keyId: owner.keyId, amount: 1, leaseMs: LEASE });
        if (!result.ok) continue;
        admitted += 1;
        await store.ledger.settle({ holdId: result.holdId, amount: 1, usage: usage() });
      }
    };
    // Two callers per instance on instances 1 and 2 keep the key busy while instance 0 revokes it.
    const hammers = Promise.all([1, 2, 1, 2].map((index) => hammer(instance(index))));
    const raw = await rawSql(schema);
    try {
      const holdCount = async () => Number((await raw<{ n: string }[]>`SELECT count(*)::text AS n FROM holds`)[0]?.n);
      while (admitted < 20) await new Promise((resolve) => setTimeout(resolve, 5));
      await instance(0).keys.revokeKey(owner.keyId);
      const atRevoke = await holdCount();
      for (const index of [1, 2]) {
        expect(await instance(index).ledger.reserve({ holdId: `after_${index}`, keyId: owner.keyId, amount: 1, leaseMs: LEASE })).toEqual({
          ok: false,
          reason: 'key_inactive',
        });
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
      // Reserves in flight when the revocation committed either finished before it (the UPDATE queues on
      // the key row behind them) or read it: no hold was created after revokeKey returned.
      expect(await holdCount()).toBe(atRevoke);
    } finally {
      stop = true;
      await hammers;
      await raw.end();
    }
  });

  it('reapers on two instances at once write off each expired grant once, skipping locked grants without waiting', async () => {
    const owners = await Promise.all([0, 1, 2, 3].map((index) => seedAccount(instance(index))));
    const perOwner = 60;
    await Promise.all(
      owners.map(async (owner, index) => {
        for (let i = 0; i < perOwner; i++) await instance(index).ledger.grant(earned(owner, 1 + (i % 9), T0 + HOUR + i));
      }),
    );
    clock.set(T0 + 2 * HOUR);
    // Each call could take every grant: the batches overlap completely unless SKIP LOCKED splits them.
    const reapAtOnce = () => Promise.all([0, 1, 0, 1, 0, 1].map((index) => instance(index).ledger.reapExpiredHolds(1_000)));

    const raw = await rawSql(schema);
    try {
      // Another transaction (a settle giving credits back, say) holds half the grants: the reapers write off
      // the other half and return instead of waiting; the held half is left for the next reap.
      await raw.begin(async (tx) => {
        await tx`SELECT 1 FROM credit_grants WHERE id % 2 = 0 ORDER BY id FOR NO KEY UPDATE`;
        expect(await reapAtOnce()).toEqual([0, 0, 0, 0, 0, 0]);
        const [left] = await tx<{ odd: string; even: string }[]>`
          SELECT count(*) FILTER (WHERE id % 2 = 1 AND remaining > 0)::text AS odd,
                 count(*) FILTER (WHERE id % 2 = 0 AND remaining > 0)::text AS even FROM credit_grants`;
        expect(left).toEqual({ odd: '0', even: String(2 * perOwner) });
      });
      expect(await reapAtOnce()).toEqual([0, 0, 0, 0, 0, 0]);

      const [totals] = await raw<{ grants: string; entries: string; expired: string; granted: string; left: string; writers: string }[]>`
        SELECT (SELECT count(DISTINCT grant_id) FROM ledger_entries WHERE kind = 'expire')::text AS grants,
               (SELECT count(*) FROM ledger_entries WHERE kind = 'expire')::text AS entries,
               (SELECT COALESCE(SUM(amount), 0) FROM ledger_entries WHERE kind = 'expire')::text AS expired,
               (SELECT SUM(amount) FROM credit_grants)::text AS granted,
               (SELECT SUM(remaining) FROM credit_grants)::text AS left,
               (SELECT count(DISTINCT xmin::text) FROM ledger_entries WHERE kind = 'expire')::text AS writers`;
      // One entry per grant, all of every grant: nothing written off twice, nothing left.
      expect(totals).toMatchObject({ grants: String(4 * perOwner), entries: String(4 * perOwner), left: '0' });
      expect(totals?.expired).toBe(totals?.granted);
      console.info('postgres concurrent expiry', { grants: 4 * perOwner, reapTransactionsThatExpired: Number(totals?.writers) });
    } finally {
      await raw.end();
    }
    expect(await instance(2).ledger.audit()).toEqual({ checks: 5, findings: [] });
  });

  it('credits released into expired grants while three reapers run are written off exactly once', async () => {
    const owners = await Promise.all([0, 1, 2].map((index) => seedAccount(instance(index))));
    let granted = 0;
    const holds: { holdId: string; amount: number; via: number }[] = [];
    await Promise.all(
      owners.map(async (owner, index) => {
        for (let i = 0; i < 20; i++) {
          const amount = 5 + (i % 7);
          granted += amount;
          await instance(index).ledger.grant(earned(owner, amount, T0 + HOUR + i * MINUTE));
        }
        // Long leases are settled after the expiry, short ones are voided by the reapers; both give
        // credits back to grants that have expired meanwhile.
        for (let i = 0; i < 24; i++) {
          const leaseMs = i % 3 === 0 ? 30 * MINUTE : 3 * HOUR;
          const result = await instance(index).ledger.reserve({ holdId: `hold_${index}_${i}`, keyId: owner.keyId, amount: 1 + (i % 6), leaseMs });
          if (!result.ok) throw new Error(`reserve refused: ${JSON.stringify(result)}`);
          if (leaseMs > HOUR) holds.push({ holdId: result.holdId, amount: result.amount, via: index + i });
        }
      }),
    );
    clock.set(T0 + 2 * HOUR);

    let charged = 0;
    let running = true;
    const reaper = async (store: Store) => {
      let voided = 0;
      while (running) voided += await store.ledger.reapExpiredHolds(3);
      return voided;
    };
    const reapers = instances.map(reaper);
    try {
      await Promise.all(
        holds.map(async ({ holdId, amount, via }) => {
          const result = await instance(via).ledger.settle({ holdId, amount: via % (amount + 1), usage: usage() });
          if (result.status !== 'settled') throw new Error(`settle of ${holdId}: ${result.status}`);
          charged += result.charged;
        }),
      );
    } finally {
      // On a failure too: nothing may still be talking to the stores when afterEach closes them.
      running = false;
      await Promise.allSettled(reapers);
    }
    let voided = (await Promise.all(reapers)).reduce((sum, n) => sum + n, 0);
    // Whatever the racing reapers left (grants they skipped while a settle held them) goes in a last pass.
    voided += await instance(0).ledger.reapExpiredHolds(1_000);

    expect(voided).toBe(3 * 8);
    expect(await instance(1).ledger.countPendingHolds()).toBe(0);
    const raw = await rawSql(schema);
    try {
      const [totals] = await raw<{ expired: string; left: string }[]>`
        SELECT (SELECT COALESCE(SUM(amount), 0) FROM ledger_entries WHERE kind = 'expire')::text AS expired,
               (SELECT SUM(remaining) FROM credit_grants)::text AS left`;
      expect(totals).toEqual({ expired: String(granted - charged), left: '0' });
    } finally {
      await raw.end();
    }
    expect(await instance(2).ledger.audit()).toEqual({ checks: 5, findings: [] });
  });

  it('a grant delivered to three instances at once with one idempotency key is applied once', async () => {
    const owner = await seedAccount(instance(0));
    const results = await Promise.all(instances.map((store) => store.ledger.grant(purchased(owner, 70, 'invoice-42'))));
    expect(results.filter((result) => result.created)).toHaveLength(1);
    expect(new Set(results.map((result) => result.grant.id)).size).toBe(1);
    expect((await instance(1).ledger.balance(owner.accountId, 'live')).purchased).toBe(70);
  });
});
