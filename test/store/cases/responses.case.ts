import { describe, expect, it } from 'vitest';
import type { SavedResponse } from '../../../src/store/types.js';
import { DAY, MINUTE, type OpenStore, type Seeded, T0, seedAccount, uniqueId, useFreshStore } from './harness.js';

/** The payloads are opaque JSON: non-ASCII, an escaped NUL and a conversation of a few hundred KB must round-trip. */
function saved(owner: Seeded, overrides: Partial<SavedResponse> = {}): SavedResponse {
  const id = overrides.id ?? uniqueId('resp');
  const turns = Array.from({ length: 2_000 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `turn ${i} héllo 🌍` }));
  return {
    id,
    accountId: owner.accountId,
    environment: owner.environment,
    keyId: owner.keyId,
    createdAt: T0,
    expiresAt: T0 + 30 * DAY,
    conversation: JSON.stringify({ messages: turns, note: 'a \u0000 NUL, escaped by JSON' }),
    output: JSON.stringify([{ type: 'message', id: `msg_${id}`, content: [{ type: 'output_text', text: 'héllo 🌍' }] }]),
    body: JSON.stringify({ id, object: 'response', status: 'completed' }),
    ...overrides,
  };
}

export function responseCases(open: OpenStore): void {
  describe('stored responses', () => {
    const h = useFreshStore(open);

    it('finds a saved response with every field as saved', async () => {
      const { store } = h();
      const owner = await seedAccount(store);
      const response = saved(owner);
      expect(response.conversation.length).toBeGreaterThan(50_000);
      await store.responses.save(response);
      expect(await store.responses.find(owner.accountId, 'live', response.id)).toEqual(response);
      expect(await store.responses.find(owner.accountId, 'live', 'resp_unknown')).toBeNull();
    });

    it('keeps the first of two saves with one id', async () => {
      const { store } = h();
      const owner = await seedAccount(store);
      const other = await seedAccount(store);
      const first = saved(owner);
      await store.responses.save(first);
      await store.responses.save({ ...first, body: '{"second":true}', output: '[]', expiresAt: T0 + 60 * DAY });
      // Even another account's save under the same id changes nothing, and does not make it theirs.
      await store.responses.save(saved(other, { id: first.id }));
      expect(await store.responses.find(owner.accountId, 'live', first.id)).toEqual(first);
      expect(await store.responses.find(other.accountId, 'live', first.id)).toBeNull();
    });

    it('shows a response only to its own account and environment', async () => {
      const { store } = h();
      const owner = await seedAccount(store);
      const other = await seedAccount(store);
      const live = saved(owner);
      const test = saved(owner, { environment: 'test' });
      await store.responses.save(live);
      await store.responses.save(test);
      expect(await store.responses.find(other.accountId, 'live', live.id)).toBeNull();
      expect(await store.responses.find(owner.accountId, 'test', live.id)).toBeNull();
      expect(await store.responses.find(owner.accountId, 'live', test.id)).toBeNull();
      expect(await store.responses.find(owner.accountId, 'test', test.id)).toEqual(test);
    });

    it('forgets a response at its expiry, by the store clock', async () => {
      const { store, clock } = h();
      const owner = await seedAccount(store);
      const response = saved(owner, { expiresAt: T0 + 10 * MINUTE });
      await store.responses.save(response);
      clock.set(T0 + 10 * MINUTE - 1);
      expect(await store.responses.find(owner.accountId, 'live', response.id)).toEqual(response);
      clock.set(T0 + 10 * MINUTE);
      expect(await store.responses.find(owner.accountId, 'live', response.id)).toBeNull();
      // Gone for the caller, so there is nothing to delete either; the purge takes it.
      expect(await store.responses.delete(owner.accountId, 'live', response.id)).toBe(false);
      expect(await store.responses.purgeExpired(10)).toBe(1);
    });

    it('deletes only for its own account and environment, once', async () => {
      const { store } = h();
      const owner = await seedAccount(store);
      const other = await seedAccount(store);
      const response = saved(owner);
      await store.responses.save(response);
      expect(await store.responses.delete(other.accountId, 'live', response.id)).toBe(false);
      expect(await store.responses.delete(owner.accountId, 'test', response.id)).toBe(false);
      expect(await store.responses.find(owner.accountId, 'live', response.id)).toEqual(response);

      expect(await store.responses.delete(owner.accountId, 'live', response.id)).toBe(true);
      expect(await store.responses.find(owner.accountId, 'live', response.id)).toBeNull();
      expect(await store.responses.delete(owner.accountId, 'live', response.id)).toBe(false);
      expect(await store.responses.delete(owner.accountId, 'live', 'resp_unknown')).toBe(false);
    });

    it('purges expired responses only, soonest expiry first, up to the limit', async () => {
      const { store, clock } = h();
      const owner = await seedAccount(store);
      const at = (id: string, minutes: number) => saved(owner, { id: `resp_${id}`, expiresAt: T0 + minutes * MINUTE });
      // Saved out of expiry order, so the order of the purge is not the order of insertion.
      for (const response of [at('a', 3), at('b', 1), at('c', 2), at('keep', 10)]) await store.responses.save(response);
      expect(await store.responses.purgeExpired(10)).toBe(0);

      clock.set(T0 + 3 * MINUTE);
      expect(await store.responses.purgeExpired(0)).toBe(0);
      expect(await store.responses.purgeExpired(1)).toBe(1);
      // b (1 minute) went first: c is still there for a clock just before its expiry.
      clock.set(T0 + 2 * MINUTE - 1);
      expect(await store.responses.find(owner.accountId, 'live', 'resp_b')).toBeNull();
      expect(await store.responses.find(owner.accountId, 'live', 'resp_c')).toMatchObject({ id: 'resp_c' });
      clock.set(T0 + 3 * MINUTE);
      expect(await store.responses.purgeExpired(10)).toBe(2);
      expect(await store.responses.purgeExpired(10)).toBe(0);
      expect(await store.responses.find(owner.accountId, 'live', 'resp_keep')).toEqual(at('keep', 10));
      // Purged rows are gone, not just hidden: a save under a purged id is a new response.
      const again = at('a', 20);
      await store.responses.save(again);
      expect(await store.responses.find(owner.accountId, 'live', 'resp_a')).toEqual(again);
    });

    it('refuses malformed input and an unknown account', async () => {
      const { store } = h();
      const owner = await seedAccount(store);
      const refused = { code: 'invalid_input' };
      await expect(store.responses.save(saved(owner, { id: '' }))).rejects.toMatchObject(refused);
      await expect(store.responses.save(saved(owner, { keyId: '' }))).rejects.toMatchObject(refused);
      await expect(store.responses.save(saved(owner, { expiresAt: 1.5 }))).rejects.toMatchObject(refused);
      await expect(store.responses.save(saved(owner, { createdAt: -1 }))).rejects.toMatchObject(refused);
      await expect(store.responses.purgeExpired(-1)).rejects.toMatchObject(refused);
      await expect(store.responses.purgeExpired(0.5)).rejects.toMatchObject(refused);
      await expect(store.responses.save(saved({ ...owner, accountId: 'acct_unknown' }))).rejects.toMatchObject({
        code: 'not_found',
      });
      expect(await store.responses.purgeExpired(10)).toBe(0);
    });
  });
}
