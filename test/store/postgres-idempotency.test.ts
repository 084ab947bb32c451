import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import type { IdempotencyClaim, IdempotencyClaimInput, Store } from '../../src/store/types.js';
import { T0 } from './cases/harness.js';
import { closeAdmin, createTestSchema, dropTestSchema, openPostgresStore } from './postgres-harness.js';

afterAll(closeAdmin);

const KEYS = 60;
const CLAIMS_PER_INSTANCE = 3;
const LEASE = 30_000;

/**
 * Three stores with separate pools on one schema stand for three gateway processes: every idempotency key
 * is claimed by all of them at once, and exactly one claim may win, fresh and on takeover.
 */
describe('postgres: idempotency records on several instances', () => {
  let schema: string;
  let clock: ManualClock;
  let instances: Store[];

  beforeEach(async () => {
    schema = await createTestSchema();
    clock = new ManualClock(T0);
    instances = [0, 1, 2].map(() => openPostgresStore(schema, clock, 6));
    await Promise.all(instances.map((store) => store.migrate()));
  });

  afterEach(async () => {
    await Promise.all(instances.map((store) => store.close()));
    await dropTestSchema(schema);
  });

  const input = (i: number): IdempotencyClaimInput => ({
    keyId: 'key_shared',
    idempotencyKey: `idem-${i}`,
    fingerprint: `body-${i}`,
    leaseMs: LEASE,
    ttlMs: 86_400_000,
  });

  /** Every instance claims every key CLAIMS_PER_INSTANCE times, all at once; the claims of each key, by key. */
  async function claimEverywhere(): Promise<IdempotencyClaim[][]> {
    const calls: Promise<{ key: number; claim: IdempotencyClaim }>[] = [];
    for (let round = 0; round < CLAIMS_PER_INSTANCE; round++) {
      for (let key = 0; key < KEYS; key++) {
        for (const store of instances) calls.push(store.idempotency.claim(input(key)).then((claim) => ({ key, claim })));
      }
    }
    const byKey: IdempotencyClaim[][] = Array.from({ length: KEYS }, () => []);
    for (const { key, claim } of await Promise.all(calls)) byKey[key]?.push(claim);
    return byKey;
  }

  it('gives each key to exactly one claim, takes each expired lease over exactly once, and replays one answer', async () => {
    const perKey = instances.length * CLAIMS_PER_INSTANCE;
    const fresh = await claimEverywhere();
    for (const claims of fresh) {
      expect(claims.filter((c) => c.status === 'claimed')).toEqual([{ status: 'claimed', takeover: false, token: expect.any(String) }]);
      expect(claims.filter((c) => c.status === 'in_flight')).toHaveLength(perKey - 1);
    }

    clock.advance(LEASE);
    const takeovers = await claimEverywhere();
    const owners: string[] = [];
    for (const claims of takeovers) {
      const won = claims.filter((c) => c.status === 'claimed');
      expect(won).toEqual([{ status: 'claimed', takeover: true, token: expect.any(String) }]);
      expect(claims.filter((c) => c.status === 'in_flight')).toHaveLength(perKey - 1);
      if (won[0]?.status === 'claimed') owners.push(won[0].token);
    }

    // Each key's owner completes it through another instance than a replay reads it from.
    await Promise.all(
      owners.map((token, key) =>
        instances[key % 3]!.idempotency.complete('key_shared', `idem-${key}`, { status: 200, contentType: 'application/json', body: `{"n":${key}}` }, token),
      ),
    );
    const replays = await claimEverywhere();
    replays.forEach((claims, key) => {
      expect(new Set(claims.map((c) => JSON.stringify(c)))).toEqual(
        new Set([JSON.stringify({ status: 'completed', response: { status: 200, contentType: 'application/json', body: `{"n":${key}}` } })]),
      );
    });

    // Purges on every instance at once take disjoint rows: each record is deleted once.
    clock.advance(86_400_000);
    const purged = await Promise.all(instances.flatMap((store) => [store.idempotency.purgeExpired(7), store.idempotency.purgeExpired(7)]));
    const rest = await instances[0]!.idempotency.purgeExpired(KEYS);
    expect(purged.reduce((a, b) => a + b, 0) + rest).toBe(KEYS);
  });
});
