import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { SqliteConnection, openSqliteDatabase } from '../../src/store/sqlite/database.js';
import { adjustRemaining } from '../../src/store/sqlite/grants.js';
import { SqliteKeyStore } from '../../src/store/sqlite/keys.js';
import { SqliteLedgerStore } from '../../src/store/sqlite/ledger.js';
import { migrate } from '../../src/store/sqlite/migrations.js';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Balance, SettleResult, Store } from '../../src/store/types.js';
import { HOUR, T0, earned, newKey, purchased, seedAccount, usage } from './cases/harness.js';
import { LedgerModel, type ModelGrant, type ModelHold, expired } from './cases/ledger-model.js';

/**
 * The SQLite ledger's writes of one event-loop turn share a transaction, and what they move in grants, the
 * allocations of their holds and the balances their settles report are written or read at its end
 * (docs/ledger.md, "Group commit"). These tests issue several writes in one turn, so that they share it,
 * and hold the store to the same one-at-a-time model as test/store/cases/property.case.ts.
 */

type Op =
  | { kind: 'grant'; credit: 'earned' | 'purchased'; amount: number; expiresIn: number }
  | { kind: 'reserve'; amount: number; leaseMs: number }
  | { kind: 'retryReserve'; pick: number }
  | { kind: 'settle'; pick: number | null; amount: number }
  | { kind: 'void'; pick: number | null }
  | { kind: 'reap'; limit: number }
  | { kind: 'advance'; ms: number }
  | { kind: 'flush' }
  | { kind: 'replayGrant'; pick: number };

const DAILY_LIMIT = 200;
const grantArb = fc.record({
  kind: fc.constant('grant' as const),
  credit: fc.constantFrom('earned' as const, 'purchased' as const),
  amount: fc.integer({ min: 1, max: 40 }),
  expiresIn: fc.integer({ min: 1, max: 3 * HOUR }),
});
const pickArb = fc.option(fc.nat(), { freq: 10, nil: null });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: grantArb, weight: 2 },
  {
    arbitrary: fc.record({ kind: fc.constant('reserve' as const), amount: fc.integer({ min: 1, max: 30 }), leaseMs: fc.integer({ min: 0, max: 2 * HOUR }) }),
    weight: 5,
  },
  { arbitrary: fc.record({ kind: fc.constant('retryReserve' as const), pick: fc.nat() }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('settle' as const), pick: pickArb, amount: fc.integer({ min: -5, max: 40 }) }), weight: 5 },
  { arbitrary: fc.record({ kind: fc.constant('void' as const), pick: pickArb }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('reap' as const), limit: fc.integer({ min: 0, max: 4 }) }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: HOUR }) }), weight: 2 },
  { arbitrary: fc.constant({ kind: 'flush' as const }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('replayGrant' as const), pick: fc.nat() }), weight: 1 },
);
/** Each op is for one of three owners: two environments of one account, and another account. */
const scenarioArb = fc
  .tuple(
    fc.array(fc.tuple(fc.integer({ min: 0, max: 2 }), grantArb), { minLength: 1, maxLength: 6 }),
    fc.array(fc.tuple(fc.integer({ min: 0, max: 2 }), opArb), { minLength: 5, maxLength: 80 }),
  )
  .map(([grants, ops]) => [...grants, ...ops] as [number, Op][]);

/** An answer the store owes, and what it must be, checked once its turn's group committed. */
interface Asked {
  answer: Promise<unknown>;
  check(value: unknown): void;
}

function asked<T>(answer: Promise<T>, check: (value: T) => void): Asked {
  return { answer, check: (value) => check(value as T) };
}

async function replay(store: Store, clock: ManualClock, ops: readonly [number, Op][]): Promise<void> {
  const a = await seedAccount(store, { dailyCreditLimit: DAILY_LIMIT });
  const aTest = await store.keys.insertKey(newKey(a.accountId, { environment: 'test', dailyCreditLimit: DAILY_LIMIT }));
  const b = await seedAccount(store, { dailyCreditLimit: DAILY_LIMIT });
  const owners = [a, { accountId: a.accountId, keyId: aTest.id, environment: 'test' as const }, b];
  const models = owners.map((o) => new LedgerModel(o.accountId, DAILY_LIMIT));
  const allGrants: ModelGrant[] = [];
  let batch: Asked[] = [];
  /** Per owner: the instants of the turn's settles, and their results (each must report the committed balance). */
  let settles: { nows: number[]; results: SettleResult[] }[] = owners.map(() => ({ nows: [], results: [] }));

  const checkOwner = async (o: number): Promise<void> => {
    const owner = owners[o]!;
    const model = models[o]!;
    const now = clock.now();
    const balance = await store.ledger.balance(owner.accountId, owner.environment);
    expect(balance).toEqual({ ...model.balance(now), environment: owner.environment });
    for (const grant of model.grants) expect((await store.ledger.grant(grant.input)).grant.remaining).toBe(grant.remaining);
    let expiredUnspent = 0;
    for (const grant of model.grants) if (expired(grant, now)) expiredUnspent += grant.remaining;
    expect(model.granted).toBe(balance.earned + balance.purchased + balance.reserved + model.charged + expiredUnspent + model.expired);
  };

  const flush = async (): Promise<void> => {
    const values = await Promise.all(batch.map((x) => x.answer));
    values.forEach((value, i) => batch[i]!.check(value));
    settles.forEach(({ nows, results }, o) => {
      if (nows.length === 0) return;
      const committed: Balance = { ...models[o]!.balance(Math.max(...nows)), environment: owners[o]!.environment };
      for (const r of results) if (r.status !== 'unknown_hold') expect(r.balance).toEqual(committed);
    });
    batch = [];
    settles = owners.map(() => ({ nows: [], results: [] }));
    for (let o = 0; o < owners.length; o++) await checkOwner(o);
    expect((await store.ledger.audit()).findings).toEqual([]);
  };

  for (const [index, [o, op]] of ops.entries()) {
    const now = clock.now();
    const owner = owners[o]!;
    const model = models[o]!;
    const pick = (p: number | null): ModelHold | undefined => (p === null ? undefined : model.holds[p % Math.max(model.holds.length, 1)]);
    switch (op.kind) {
      case 'grant': {
        const input = op.credit === 'earned' ? earned(owner, op.amount, now + op.expiresIn, `g-${index}`) : purchased(owner, op.amount, `g-${index}`);
        model.grant(input);
        allGrants.push(model.grants[model.grants.length - 1]!);
        batch.push(asked(store.ledger.grant(input), (v) => expect(v.created).toBe(true)));
        break;
      }
      case 'reserve': {
        const holdId = `hold_${String(index).padStart(3, '0')}_${o}`;
        const expected = model.reserve(holdId, op.amount, op.leaseMs, now);
        batch.push(asked(store.ledger.reserve({ holdId, keyId: owner.keyId, amount: op.amount, leaseMs: op.leaseMs }), (v) => expect(v).toEqual(expected)));
        break;
      }
      case 'retryReserve': {
        const held = model.holds[op.pick % Math.max(model.holds.length, 1)];
        if (!held) break;
        const expected = { ok: true, holdId: held.id, amount: held.amount, leaseExpiresAt: held.leaseExpiresAt, status: held.status };
        batch.push(asked(store.ledger.reserve({ holdId: held.id, keyId: owner.keyId, amount: held.amount, leaseMs: 1 }), (v) => expect(v).toEqual(expected)));
        break;
      }
      case 'settle': {
        const held = pick(op.pick);
        const expected = model.settle(held, op.amount, now);
        if (held) settles[o]!.nows.push(now);
        batch.push(
          asked(store.ledger.settle({ holdId: held?.id ?? 'hold_unknown', amount: op.amount, usage: usage() }), (v) => {
            settles[o]!.results.push(v);
            // The balance is checked against the committed one in flush().
            const strip = (r: SettleResult): Record<string, unknown> => Object.fromEntries(Object.entries(r).filter(([k]) => k !== 'balance'));
            expect(strip(v)).toEqual(strip(expected));
          }),
        );
        break;
      }
      case 'void': {
        const held = pick(op.pick);
        const expected = model.void(held);
        batch.push(asked(store.ledger.void(held?.id ?? 'hold_unknown'), (v) => expect(v).toBe(expected)));
        break;
      }
      case 'reap': {
        // Across owners, as the store reaps: the oldest leases first, then the lowest grant ids.
        const due = models
          .flatMap((m) => m.holds.filter((h) => h.status === 'pending' && h.leaseExpiresAt <= now).map((h) => [m, h] as const))
          .sort(([, x], [, y]) => x.leaseExpiresAt - y.leaseExpiresAt || x.createdAt - y.createdAt || (x.id < y.id ? -1 : 1))
          .slice(0, op.limit);
        for (const [m, h] of due) m.void(h);
        const expiring = allGrants.filter((g) => g.input.kind === 'earned' && g.remaining > 0 && expired(g, now)).slice(0, op.limit);
        for (const g of expiring) {
          const m = models.find((x) => x.grants.includes(g))!;
          m.expired += g.remaining;
          g.remaining = 0;
        }
        batch.push(asked(store.ledger.reapExpiredHolds(op.limit), (v) => expect(v).toBe(due.length)));
        break;
      }
      case 'advance':
        clock.advance(op.ms);
        break;
      case 'replayGrant': {
        const g = model.grants[op.pick % Math.max(model.grants.length, 1)];
        if (!g) break;
        // What the grant holds after the writes asked before it in the same turn.
        const remaining = g.remaining;
        batch.push(asked(store.ledger.grant(g.input), (v) => expect({ created: v.created, remaining: v.grant.remaining }).toEqual({ created: false, remaining })));
        break;
      }
      case 'flush':
        await flush();
        break;
    }
  }
  await flush();
}

describe('sqlite ledger: writes that share a transaction', () => {
  it('answers as the one-at-a-time model does, and reports each group the balance it commits', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (ops) => {
        const clock = new ManualClock(T0);
        const store = createSqliteStore({ path: ':memory:', clock });
        try {
          await store.migrate();
          await replay(store, clock, ops);
        } finally {
          await store.close();
        }
      }),
      { numRuns: 400 },
    );
  }, 120_000);

  it('rolls the whole group back when a grant sum is refused while the reap writes the sums, and loses no credit', async () => {
    const clock = new ManualClock(T0);
    const conn = new SqliteConnection(openSqliteDatabase(':memory:'));
    try {
      migrate(conn, clock);
      const keys = new SqliteKeyStore(conn, clock);
      const ledger = new SqliteLedgerStore(conn, clock);
      await keys.createAccount({ id: 'acct', name: null });
      const key = await keys.insertKey(newKey('acct'));
      const owner = { accountId: 'acct', keyId: key.id, environment: 'live' as const };
      const first = (await ledger.grant(purchased(owner, 100))).grant;
      await ledger.grant(purchased(owner, 100));
      // A write whose grant move breaks CHECK (remaining >= 0): the stand-in for a bug the CHECK is there for.
      const broken = conn.write(() => adjustRemaining(conn, owner, Number(first.id), -1000));
      const [bad, reserved, reaped] = await Promise.allSettled([
        broken,
        ledger.reserve({ holdId: 'hold_1', keyId: owner.keyId, amount: 10, leaseMs: HOUR }),
        ledger.reapExpiredHolds(10),
      ]);
      expect(bad.status).toBe('rejected');
      expect(reaped.status).toBe('rejected');
      // The reserve, rolled back with the reap's refused sums, ran again, and once more alone when the broken
      // write's sum was refused at the COMMIT: held once.
      expect(reserved).toMatchObject({ status: 'fulfilled', value: { ok: true } });
      expect(conn.all<{ remaining: number }>('SELECT remaining FROM credit_grants ORDER BY id')).toEqual([{ remaining: 90 }, { remaining: 100 }]);
      expect(await ledger.countPendingHolds()).toBe(1);
      expect((await ledger.audit()).findings).toEqual([]);
      // Its caller asking again (a lost reply) gets the same hold, not a second one.
      expect(await ledger.reserve({ holdId: 'hold_1', keyId: owner.keyId, amount: 10, leaseMs: HOUR })).toMatchObject({ ok: true });
      expect(await ledger.balance('acct', 'live')).toMatchObject({ purchased: 190, reserved: 10 });
      expect(await ledger.countPendingHolds()).toBe(1);
    } finally {
      conn.close();
    }
  });

  it.each([-0, -5, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 2 ** 40, 17])('settles a hold of 30 asked for %s at min(max(amount, 0), 30)', async (amount) => {
    const clock = new ManualClock(T0);
    const store = createSqliteStore({ path: ':memory:', clock });
    try {
      await store.migrate();
      const owner = await seedAccount(store);
      await store.ledger.grant(purchased(owner, 100));
      await store.ledger.reserve({ holdId: 'hold_1', keyId: owner.keyId, amount: 30, leaseMs: HOUR });
      const settled = await store.ledger.settle({ holdId: 'hold_1', amount, usage: usage() });
      const charged = Math.min(Math.max(amount, 0), 30);
      expect(settled).toMatchObject({ status: 'settled', charged, balance: { purchased: 100 - charged, reserved: 0 } });
      expect((await store.ledger.audit()).findings).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
