import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Store } from '../../../src/store/types.js';
import { DAY, HOUR, MINUTE, type OpenStore, T0, type Seeded, earned, purchased, seedAccount, usage } from './harness.js';
import { LedgerModel, type ModelHold, expired } from './ledger-model.js';

type Op =
  | { kind: 'grant'; credit: 'earned' | 'purchased'; amount: number; expiresIn: number }
  | { kind: 'reserve'; amount: number; leaseMs: number }
  | { kind: 'settle'; pick: number | null; amount: number }
  | { kind: 'void'; pick: number | null }
  | { kind: 'reap'; limit: number }
  | { kind: 'advance'; ms: number };

const DAILY_LIMIT = 80;

const grantArbitrary = fc.record({
  kind: fc.constant('grant' as const),
  credit: fc.constantFrom('earned' as const, 'purchased' as const),
  amount: fc.integer({ min: 1, max: 40 }),
  expiresIn: fc.integer({ min: 1, max: 3 * DAY }),
});

/** Which hold an operation targets; null aims at an id the store never saw. */
const pickArbitrary = fc.option(fc.nat(), { freq: 10, nil: null });

/** Weighted towards reserve and settle, so most runs build up and finish holds rather than idle. */
const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: grantArbitrary, weight: 2 },
  {
    arbitrary: fc.record({
      kind: fc.constant('reserve' as const),
      amount: fc.integer({ min: 1, max: 30 }),
      leaseMs: fc.integer({ min: MINUTE, max: 6 * HOUR }),
    }),
    weight: 4,
  },
  {
    arbitrary: fc.record({ kind: fc.constant('settle' as const), pick: pickArbitrary, amount: fc.integer({ min: -5, max: 40 }) }),
    weight: 4,
  },
  { arbitrary: fc.record({ kind: fc.constant('void' as const), pick: pickArbitrary }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('reap' as const), limit: fc.integer({ min: 0, max: 3 }) }), weight: 1 },
  {
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      ms: fc.oneof(fc.integer({ min: 0, max: 3 * HOUR }), fc.integer({ min: 0, max: 2 * DAY })),
    }),
    weight: 2,
  },
);

/** A few grants first, so the interleavings start from an account that has credits to fight over. */
const scenarioArbitrary: fc.Arbitrary<Op[]> = fc
  .tuple(fc.array(grantArbitrary, { minLength: 1, maxLength: 4 }), fc.array(opArbitrary, { minLength: 5, maxLength: 50, size: 'medium' }))
  .map(([grants, ops]) => [...grants, ...ops]);

export function propertyCases(open: OpenStore): void {
  describe('ledger invariants under random interleavings', () => {
    it('matches the reference model and conserves every credit', async () => {
      await fc.assert(
        fc.asyncProperty(scenarioArbitrary, async (ops) => {
          const harness = await open();
          try {
            harness.clock.set(T0);
            await harness.store.migrate();
            await replay(harness.store, () => harness.clock.now(), (ms) => harness.clock.advance(ms), ops);
            // Whatever the interleaving, the journal must account for every materialized number.
            expect((await harness.store.ledger.audit()).findings).toEqual([]);
          } finally {
            await harness.close();
          }
        }),
        { numRuns: 100 },
      );
    });
  });
}

async function replay(store: Store, now: () => number, advance: (ms: number) => void, ops: Op[]): Promise<void> {
  const owner = await seedAccount(store, { dailyCreditLimit: DAILY_LIMIT });
  const model = new LedgerModel(owner.accountId, DAILY_LIMIT);
  const finalized = new Set<string>();
  const markFinal = (holdId: string) => {
    expect(finalized.has(holdId), `hold ${holdId} finalized twice`).toBe(false);
    finalized.add(holdId);
  };

  for (const [index, op] of ops.entries()) {
    switch (op.kind) {
      case 'grant': {
        const input =
          op.credit === 'earned'
            ? earned(owner, op.amount, now() + op.expiresIn, `grant-${index}`)
            : purchased(owner, op.amount, `grant-${index}`);
        expect((await store.ledger.grant(input)).created).toBe(true);
        model.grant(input);
        break;
      }
      case 'reserve': {
        const holdId = `hold_${String(index).padStart(3, '0')}`;
        const expected = model.reserve(holdId, op.amount, op.leaseMs, now());
        expect(await store.ledger.reserve({ holdId, keyId: owner.keyId, amount: op.amount, leaseMs: op.leaseMs })).toEqual(expected);
        break;
      }
      case 'settle': {
        const held = pickHold(model, op.pick);
        const result = await store.ledger.settle({ holdId: held?.id ?? 'hold_unknown', amount: op.amount, usage: usage() });
        expect(result).toEqual(model.settle(held, op.amount, now()));
        if (result.status === 'settled' && held) markFinal(held.id);
        break;
      }
      case 'void': {
        const held = pickHold(model, op.pick);
        const voided = await store.ledger.void(held?.id ?? 'hold_unknown');
        expect(voided).toBe(model.void(held));
        if (voided && held) markFinal(held.id);
        break;
      }
      case 'reap': {
        const pendingBefore = new Set(model.holds.filter((h) => h.status === 'pending').map((h) => h.id));
        expect(await store.ledger.reapExpiredHolds(op.limit)).toBe(model.reap(now(), op.limit));
        for (const held of model.holds) if (pendingBefore.has(held.id) && held.status !== 'pending') markFinal(held.id);
        break;
      }
      case 'advance':
        advance(op.ms);
        break;
    }
    await checkInvariants(store, owner, model, now());
  }
}

function pickHold(model: LedgerModel, pick: number | null): ModelHold | undefined {
  return pick === null ? undefined : model.holds[pick % Math.max(model.holds.length, 1)];
}

async function checkInvariants(store: Store, owner: Seeded, model: LedgerModel, now: number): Promise<void> {
  const balance = await store.ledger.balance(owner.accountId, 'live');
  expect(balance).toEqual(model.balance(now));
  for (const part of [balance.earned, balance.purchased, balance.reserved]) expect(part).toBeGreaterThanOrEqual(0);
  expect(await store.ledger.countPendingHolds(owner.accountId)).toBe(model.pending());

  let expiredUnspent = 0;
  for (const grant of model.grants) {
    const stored = (await store.ledger.grant(grant.input)).grant;
    expect(stored.remaining).toBeGreaterThanOrEqual(0);
    expect(stored.remaining).toBe(grant.remaining);
    if (expired(grant, now)) expiredUnspent += stored.remaining;
  }
  // Every granted credit is in exactly one place: available, held, spent, expired but not yet written off
  // (remaining of an expired grant before the next reap), or written off by a reap.
  expect(model.granted).toBe(balance.earned + balance.purchased + balance.reserved + model.charged + expiredUnspent + model.expired);
}
