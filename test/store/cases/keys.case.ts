import { describe, expect, it } from 'vitest';
import { MINUTE, type OpenStore, T0, newKey, uniqueId, useFreshStore } from './harness.js';

export function keyCases(open: OpenStore): void {
  describe('migrations, accounts and keys', () => {
    const h = useFreshStore(open);

    it('migrating again is a no-op that keeps the data', async () => {
      const { store } = h();
      await store.keys.createAccount({ id: 'acct_migrate', name: 'Kept' });
      await store.migrate();
      await store.migrate();
      expect(await store.keys.getAccount('acct_migrate')).toEqual({ id: 'acct_migrate', name: 'Kept', createdAt: T0 });
      expect(await store.keys.countAccounts()).toBe(1);
    });

    it('creates, reads and counts accounts; a duplicate id is rejected', async () => {
      const { store } = h();
      expect(await store.keys.countAccounts()).toBe(0);
      expect(await store.keys.createAccount({ id: 'acct_a', name: 'A' })).toEqual({ id: 'acct_a', name: 'A', createdAt: T0 });
      await store.keys.createAccount({ id: 'acct_b', name: null });
      expect(await store.keys.getAccount('acct_b')).toEqual({ id: 'acct_b', name: null, createdAt: T0 });
      expect(await store.keys.getAccount('acct_missing')).toBeNull();
      expect(await store.keys.countAccounts()).toBe(2);
      await expect(store.keys.createAccount({ id: 'acct_a', name: 'again' })).rejects.toMatchObject({ code: 'conflict' });
      expect((await store.keys.getAccount('acct_a'))?.name).toBe('A');
    });

    it('stores keys as given and finds them by public id', async () => {
      const { store } = h();
      await store.keys.createAccount({ id: 'acct_k', name: null });
      const input = newKey('acct_k', { name: 'ci', environment: 'test', dailyCreditLimit: 500 });
      const record = await store.keys.insertKey(input);
      expect(record).toEqual({ ...input, createdAt: T0, revokedAt: null });
      expect(await store.keys.findKey(input.id)).toEqual(record);
      expect(await store.keys.findKey('key_missing')).toBeNull();
    });

    it('rejects a key for an unknown account and a duplicate key id', async () => {
      const { store } = h();
      await expect(store.keys.insertKey(newKey('acct_nope'))).rejects.toMatchObject({ code: 'not_found' });
      await store.keys.createAccount({ id: 'acct_d', name: null });
      const key = newKey('acct_d');
      await store.keys.insertKey(key);
      await expect(store.keys.insertKey(key)).rejects.toMatchObject({ code: 'conflict' });
    });

    it('lists active keys oldest first and leaves revoked keys out', async () => {
      const { store, clock } = h();
      await store.keys.createAccount({ id: 'acct_l', name: null });
      await store.keys.createAccount({ id: 'acct_other', name: null });
      const first = await store.keys.insertKey(newKey('acct_l', { id: uniqueId('key_first') }));
      clock.advance(MINUTE);
      const second = await store.keys.insertKey(newKey('acct_l', { id: 'key_aaa_second' }));
      clock.advance(MINUTE);
      const third = await store.keys.insertKey(newKey('acct_l', { id: uniqueId('key_third') }));
      await store.keys.insertKey(newKey('acct_other'));
      await store.keys.revokeKey(second.id);
      expect((await store.keys.listActiveKeys('acct_l')).map((key) => key.id)).toEqual([first.id, third.id]);
      expect(await store.keys.listActiveKeys('acct_none')).toEqual([]);
    });

    it('revokes idempotently, keeping the first revocation time', async () => {
      const { store, clock } = h();
      await store.keys.createAccount({ id: 'acct_r', name: null });
      const key = await store.keys.insertKey(newKey('acct_r'));
      clock.advance(MINUTE);
      expect((await store.keys.revokeKey(key.id))?.revokedAt).toBe(T0 + MINUTE);
      clock.advance(MINUTE);
      expect((await store.keys.revokeKey(key.id))?.revokedAt).toBe(T0 + MINUTE);
      expect((await store.keys.findKey(key.id))?.revokedAt).toBe(T0 + MINUTE);
      expect(await store.keys.revokeKey('key_missing')).toBeNull();
    });
  });
}
