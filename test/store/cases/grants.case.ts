import { describe, expect, it } from 'vitest';
import { DAY, HOUR, type OpenStore, T0, earned, hold, probeGrant, purchased, reserve, seedAccount, useFreshStore } from './harness.js';

export function grantCases(open: OpenStore): void {
  describe('grants and balance', () => {
    const h = useFreshStore(open);

    it('returns the grant it created', async () => {
      const { store } = h();
      const owner = await seedAccount(store);
      const earnedGrant = await store.ledger.grant(earned(owner, 100, T0 + DAY));
      expect(earnedGrant.created).toBe(true);
      expect(earnedGrant.grant).toMatchObject({
        accountId: owner.accountId,
        environment: 'live',
        kind: 'earned',
        amount: 100,
        remaining: 100,
        expiresAt: T0 + DAY,
        createdAt: T0,
      });
      const bought = await store.ledger.grant(purchased(owner, 50));
      expect(bought.grant).toMatchObject({ kind: 'purchased', amount: 50, remaining: 50, expiresAt: null });
      expect(bought.grant.id).not.toBe(earnedGrant.grant.id);
    });

    it('applies a grant once per idempotency key and account', async () => {
      const { store } = h();
      const owner = await seedAccount(store);
      const other = await seedAccount(store);
      const first = await store.ledger.grant(purchased(owner, 40, 'order-1'));
      const again = await store.ledger.grant({ ...purchased(owner, 999, 'order-1') });
      expect(again).toEqual({ grant: first.grant, created: false });
      expect((await store.ledger.balance(owner.accountId, 'live')).purchased).toBe(40);
      // The key is scoped to the account: another account may use the same one.
      expect((await store.ledger.grant(purchased(other, 7, 'order-1'))).created).toBe(true);
      expect((await store.ledger.balance(other.accountId, 'live')).purchased).toBe(7);
    });

    it('returns the first grant as it is now when the key is reused', async () => {
      const { store } = h();
      const owner = await seedAccount(store);
      await store.ledger.grant(purchased(owner, 40, 'order-2'));
      await hold(store, owner, 15);
      expect((await probeGrant(store, purchased(owner, 40, 'order-2'))).remaining).toBe(25);
    });

    it('rejects malformed grants and grants to unknown accounts', async () => {
      const { store } = h();
      const owner = await seedAccount(store);
      await expect(store.ledger.grant(purchased(owner, 0))).rejects.toMatchObject({ code: 'invalid_input' });
      await expect(store.ledger.grant(purchased(owner, -5))).rejects.toMatchObject({ code: 'invalid_input' });
      await expect(store.ledger.grant(purchased(owner, 1.5))).rejects.toMatchObject({ code: 'invalid_input' });
      await expect(store.ledger.grant({ ...earned(owner, 5, T0), expiresAt: null })).rejects.toMatchObject({
        code: 'invalid_input',
      });
      await expect(store.ledger.grant({ ...purchased(owner, 5), expiresAt: T0 + DAY })).rejects.toMatchObject({
        code: 'invalid_input',
      });
      await expect(store.ledger.grant({ ...purchased(owner, 5), accountId: 'acct_nope' })).rejects.toMatchObject({
        code: 'not_found',
      });
      expect(await store.ledger.balance(owner.accountId, 'live')).toMatchObject({ earned: 0, purchased: 0 });
    });

    it('reports an empty balance for an account without grants', async () => {
      const { store } = h();
      expect(await store.ledger.balance('acct_nobody', 'live')).toEqual({
        accountId: 'acct_nobody',
        environment: 'live',
        earned: 0,
        earnedNextExpiry: null,
        purchased: 0,
        reserved: 0,
      });
    });

    it('sums earned and purchased credits, with the soonest expiry among unspent earned grants', async () => {
      const { store } = h();
      const owner = await seedAccount(store);
      await store.ledger.grant(earned(owner, 30, T0 + 2 * DAY));
      await store.ledger.grant(earned(owner, 10, T0 + DAY));
      await store.ledger.grant(purchased(owner, 5));
      await store.ledger.grant(purchased(owner, 6));
      expect(await store.ledger.balance(owner.accountId, 'live')).toEqual({
        accountId: owner.accountId,
        environment: 'live',
        earned: 40,
        earnedNextExpiry: T0 + DAY,
        purchased: 11,
        reserved: 0,
      });
      // Once the soonest grant is fully held, the next expiry is the other grant's.
      await hold(store, owner, 10);
      expect(await store.ledger.balance(owner.accountId, 'live')).toMatchObject({
        earned: 30,
        earnedNextExpiry: T0 + 2 * DAY,
        reserved: 10,
      });
    });

    it('keeps environments apart', async () => {
      const { store } = h();
      const live = await seedAccount(store);
      const testKey = await store.keys.insertKey({
        id: `${live.keyId}_test`,
        accountId: live.accountId,
        environment: 'test',
        name: null,
        salt: 's',
        secretHash: 'h',
        redacted: 'svc_test_...',
        dailyCreditLimit: null,
      });
      await store.ledger.grant(purchased(live, 10));
      expect(await store.ledger.balance(live.accountId, 'test')).toMatchObject({ purchased: 0 });
      const onTest = await reserve(store, { ...live, keyId: testKey.id, environment: 'test' }, 1);
      expect(onTest).toEqual({ ok: false, reason: 'insufficient_credits', available: 0 });
      await store.ledger.grant({ ...purchased(live, 3), environment: 'test' });
      expect((await reserve(store, { ...live, keyId: testKey.id, environment: 'test' }, 3)).ok).toBe(true);
      expect(await store.ledger.balance(live.accountId, 'live')).toMatchObject({ purchased: 10, reserved: 0 });
      expect(await store.ledger.balance(live.accountId, 'test')).toMatchObject({ purchased: 0, reserved: 3 });
    });

    it('stops counting earned credits at their expiry and never reserves them', async () => {
      const { store, clock } = h();
      const owner = await seedAccount(store);
      await store.ledger.grant(earned(owner, 10, T0 + HOUR));
      await store.ledger.grant(purchased(owner, 5));
      clock.advance(HOUR - 1);
      expect(await store.ledger.balance(owner.accountId, 'live')).toMatchObject({ earned: 10, earnedNextExpiry: T0 + HOUR });
      clock.advance(1);
      expect(await store.ledger.balance(owner.accountId, 'live')).toMatchObject({
        earned: 0,
        earnedNextExpiry: null,
        purchased: 5,
      });
      expect(await reserve(store, owner, 6)).toEqual({ ok: false, reason: 'insufficient_credits', available: 5 });
      expect((await reserve(store, owner, 5)).ok).toBe(true);
    });
  });
}
