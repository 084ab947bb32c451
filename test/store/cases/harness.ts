import { afterEach, beforeEach, expect } from 'vitest';
import type { ManualClock } from '../../../src/core/clock.js';
import type { Environment, Grant, GrantInput, NewApiKey, Store, UsageRecord } from '../../../src/store/types.js';

export interface StoreHarness {
  store: Store;
  clock: ManualClock;
  close(): Promise<void>;
}

/** Opens an empty, not yet migrated store: the suite migrates it itself (and checks migrating twice). */
export type OpenStore = () => Promise<StoreHarness>;

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;
/** Mid-day UTC, so a few hours either way stay on the same day. */
export const T0 = Date.UTC(2025, 0, 15, 12, 0, 0);

/** A fresh migrated store per test, its clock at T0. */
export function useFreshStore(open: OpenStore): () => StoreHarness {
  let current: StoreHarness | undefined;
  beforeEach(async () => {
    current = await open();
    current.clock.set(T0);
    await current.store.migrate();
  });
  afterEach(async () => {
    await current?.close();
    current = undefined;
  });
  return () => {
    if (!current) throw new Error('store used outside a test');
    return current;
  };
}

let counter = 0;
export function uniqueId(prefix: string): string {
  counter += 1;
  return `${prefix}_${Date.now().toString(36)}_${counter}`;
}

export function newKey(accountId: string, overrides: Partial<NewApiKey> = {}): NewApiKey {
  return {
    id: uniqueId('key'),
    accountId,
    environment: 'live',
    name: null,
    salt: 'c2FsdA',
    secretHash: 'aGFzaA',
    redacted: 'svc_live_AbC...xYz1',
    dailyCreditLimit: null,
    rpmLimit: null,
    tpmLimit: null,
    parentKeyId: null,
    ...overrides,
  };
}

export interface Seeded {
  accountId: string;
  keyId: string;
  environment: Environment;
}

export async function seedAccount(
  store: Store,
  options: { environment?: Environment; dailyCreditLimit?: number | null } = {},
): Promise<Seeded> {
  const account = await store.keys.createAccount({ id: uniqueId('acct'), name: null });
  const environment = options.environment ?? 'live';
  const key = await store.keys.insertKey(
    newKey(account.id, { environment, dailyCreditLimit: options.dailyCreditLimit ?? null }),
  );
  return { accountId: account.id, keyId: key.id, environment };
}

export function earned(owner: Seeded, amount: number, expiresAt: number, idempotencyKey: string | null = null): GrantInput {
  return { accountId: owner.accountId, environment: owner.environment, kind: 'earned', amount, expiresAt, idempotencyKey };
}

export function purchased(owner: Seeded, amount: number, idempotencyKey: string | null = null): GrantInput {
  return { accountId: owner.accountId, environment: owner.environment, kind: 'purchased', amount, expiresAt: null, idempotencyKey };
}

/**
 * Reads a grant's current state through the interface: granting again with a used idempotency key changes
 * nothing and returns the first grant as it is now.
 */
export async function probeGrant(store: Store, input: GrantInput): Promise<Grant> {
  if (input.idempotencyKey === null) throw new Error('probeGrant needs a grant made with an idempotency key');
  const result = await store.ledger.grant(input);
  expect(result.created).toBe(false);
  return result.grant;
}

export function usage(overrides: Partial<UsageRecord> = {}): UsageRecord {
  return {
    requestId: uniqueId('req'),
    model: 'svc-fast',
    routedModel: 'upstream-fast-1',
    routedProvider: 'sandbox',
    promptTokens: 10,
    completionTokens: 20,
    outcome: 'completed',
    latencyMs: 123,
    shortfallCredits: 0,
    ...overrides,
  };
}

export async function reserve(store: Store, owner: Seeded, amount: number, leaseMs = 5 * MINUTE, holdId = uniqueId('hold')) {
  return store.ledger.reserve({ holdId, keyId: owner.keyId, amount, leaseMs });
}

/** Reserves and fails the test unless the hold was created. */
export async function hold(store: Store, owner: Seeded, amount: number, leaseMs = 5 * MINUTE): Promise<string> {
  const result = await reserve(store, owner, amount, leaseMs);
  if (!result.ok) throw new Error(`expected reserve of ${amount} to succeed, got ${JSON.stringify(result)}`);
  return result.holdId;
}
