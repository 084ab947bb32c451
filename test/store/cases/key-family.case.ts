import { describe, expect, it } from 'vitest';
import type { Store } from '../../../src/store/types.js';
import {
  HOUR,
  MINUTE,
  type OpenStore,
  type Seeded,
  T0,
  hold,
  newKey,
  purchased,
  reserve,
  seedAccount,
  useFreshStore,
  usage,
} from './harness.js';

/** A key created by `parent` (as POST /v1/api-keys does for a capped actor). */
async function child(store: Store, parent: Seeded, dailyCreditLimit: number | null): Promise<Seeded> {
  const key = await store.keys.insertKey(newKey(parent.accountId, { dailyCreditLimit, parentKeyId: parent.keyId }));
  return { ...parent, keyId: key.id };
}

export function keyFamilyCases(open: OpenStore): void {
  describe('key families (a capped key cannot multiply its budget)', () => {
    const h = useFreshStore(open);

    it('records the parent; refuses a parent that is revoked, unknown or of another account', async () => {
      const { store } = h();
      const root = await seedAccount(store, { dailyCreditLimit: 100 });
      const kid = await child(store, root, 100);
      expect(await store.keys.findKey(kid.keyId)).toMatchObject({ parentKeyId: root.keyId, createdAt: T0, revokedAt: null });
      expect((await store.keys.findKey(root.keyId))?.parentKeyId).toBeNull();
      const stranger = await seedAccount(store);
      await expect(store.keys.insertKey(newKey(stranger.accountId, { parentKeyId: root.keyId }))).rejects.toMatchObject({ code: 'not_found' });
      await expect(store.keys.insertKey(newKey(root.accountId, { parentKeyId: 'key_missing' }))).rejects.toMatchObject({ code: 'not_found' });
      await store.keys.revokeKey(root.keyId);
      await expect(store.keys.insertKey(newKey(root.accountId, { parentKeyId: kid.keyId }))).rejects.toMatchObject({ code: 'not_found' });
      expect((await store.keys.listActiveKeys(root.accountId)).length).toBe(0);
    });

    it('refuses a key past the account\'s active-key limit, counted with the insert in one step, even concurrently', async () => {
      const { store } = h();
      const root = await seedAccount(store);
      // The seeded key is 1 of 4; concurrent inserts must not pass the limit together.
      const results = await Promise.allSettled(
        Array.from({ length: 10 }, (_, i) => store.keys.insertKey(newKey(root.accountId, { activeKeyLimit: 4, parentKeyId: i % 2 === 0 ? root.keyId : null }))),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
      for (const r of results.filter((x) => x.status === 'rejected')) expect(r.reason).toMatchObject({ code: 'limit_exceeded' });
      expect(await store.keys.listActiveKeys(root.accountId)).toHaveLength(4);
      // Revoked keys do not count; other accounts' keys do not either; no limit, no refusal.
      const [first] = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      await store.keys.revokeKey(first?.id ?? '');
      await expect(store.keys.insertKey(newKey(root.accountId, { activeKeyLimit: 4 }))).resolves.toMatchObject({ accountId: root.accountId });
      await expect(store.keys.insertKey(newKey(root.accountId, { activeKeyLimit: 4 }))).rejects.toMatchObject({ code: 'limit_exceeded' });
      const other = await seedAccount(store);
      await expect(store.keys.insertKey(newKey(other.accountId, { activeKeyLimit: 4 }))).resolves.toMatchObject({ accountId: other.accountId });
      await expect(store.keys.insertKey(newKey(root.accountId))).resolves.toMatchObject({ accountId: root.accountId });
    });

    it('revoking a key revokes its descendants at once, and nothing above or beside it', async () => {
      const { store, clock } = h();
      const root = await seedAccount(store, { dailyCreditLimit: 100 });
      await store.ledger.grant(purchased(root, 1_000));
      const a = await child(store, root, 100);
      const b = await child(store, root, 50);
      const a1 = await child(store, a, 100);
      const a11 = await child(store, a1, 10);
      clock.advance(MINUTE);
      const revoked = await store.keys.revokeKey(a.keyId);
      expect(revoked).toMatchObject({ id: a.keyId, revokedAt: T0 + MINUTE });
      for (const gone of [a, a1, a11]) {
        expect((await store.keys.findKey(gone.keyId))?.revokedAt).toBe(T0 + MINUTE);
        expect(await reserve(store, gone, 1)).toEqual({ ok: false, reason: 'key_inactive' });
      }
      expect((await store.keys.listActiveKeys(root.accountId)).map((k) => k.id).sort()).toEqual([root.keyId, b.keyId].sort());
      expect((await reserve(store, b, 1)).ok).toBe(true);
      expect((await reserve(store, root, 1)).ok).toBe(true);
      // Revoking again keeps every first revocation time.
      clock.advance(MINUTE);
      await store.keys.revokeKey(root.keyId);
      expect((await store.keys.findKey(a11.keyId))?.revokedAt).toBe(T0 + MINUTE);
      expect((await store.keys.findKey(b.keyId))?.revokedAt).toBe(T0 + 2 * MINUTE);
    });

    it("children share their capped parent's daily budget: N children never spend more than the cap", async () => {
      const { store } = h();
      const root = await seedAccount(store, { dailyCreditLimit: 100 });
      await store.ledger.grant(purchased(root, 10_000));
      const kids = await Promise.all(Array.from({ length: 5 }, () => child(store, root, 100)));
      const first = await hold(store, kids[0]!, 60);
      expect(await reserve(store, kids[1]!, 50)).toEqual({ ok: false, reason: 'daily_limit_exceeded', limit: 100, committedToday: 60 });
      expect(await reserve(store, root, 41)).toEqual({ ok: false, reason: 'daily_limit_exceeded', limit: 100, committedToday: 60 });
      await hold(store, kids[2]!, 40);
      for (const kid of [root, ...kids]) expect(await reserve(store, kid, 1)).toMatchObject({ reason: 'daily_limit_exceeded' });
      // A settle below the hold gives the difference back to the whole family.
      await store.ledger.settle({ holdId: first, amount: 10, usage: usage() });
      expect((await reserve(store, kids[4]!, 50)).ok).toBe(true);
      expect(await reserve(store, root, 1)).toMatchObject({ reason: 'daily_limit_exceeded', committedToday: 100 });
      expect(await store.ledger.audit()).toMatchObject({ findings: [] });
    });

    it('a capped child keeps its own cap inside its parent budget (each capped ancestor is checked)', async () => {
      const { store } = h();
      const root = await seedAccount(store, { dailyCreditLimit: 100 });
      await store.ledger.grant(purchased(root, 10_000));
      const mid = await child(store, root, 50);
      const leaf = await child(store, mid, 50);
      const sibling = await child(store, mid, 50);
      await hold(store, leaf, 40);
      expect(await reserve(store, sibling, 20)).toEqual({ ok: false, reason: 'daily_limit_exceeded', limit: 50, committedToday: 40 });
      expect(await reserve(store, mid, 11)).toEqual({ ok: false, reason: 'daily_limit_exceeded', limit: 50, committedToday: 40 });
      await hold(store, sibling, 10);
      await hold(store, root, 50);
      expect(await reserve(store, root, 1)).toEqual({ ok: false, reason: 'daily_limit_exceeded', limit: 100, committedToday: 100 });
      expect(await store.ledger.audit()).toMatchObject({ findings: [] });
    });

    it("voided and reaped holds of a child give the credits back to the family's budget", async () => {
      const { store, clock } = h();
      const root = await seedAccount(store, { dailyCreditLimit: 30 });
      await store.ledger.grant(purchased(root, 1_000));
      const a = await child(store, root, 30);
      const b = await child(store, a, 30);
      const voided = await hold(store, b, 30, HOUR);
      expect(await reserve(store, root, 1)).toMatchObject({ reason: 'daily_limit_exceeded' });
      expect(await store.ledger.void(voided)).toBe(true);
      await hold(store, a, 20, MINUTE);
      await hold(store, b, 10, MINUTE);
      expect(await reserve(store, root, 1)).toMatchObject({ reason: 'daily_limit_exceeded', committedToday: 30 });
      clock.advance(2 * MINUTE);
      expect(await store.ledger.reapExpiredHolds(100)).toBe(2);
      expect((await reserve(store, root, 30)).ok).toBe(true);
      expect(await store.ledger.audit()).toMatchObject({ findings: [] });
    });

    it("an uncapped parent's own counter is not its children's, and refuses nothing", async () => {
      const { store } = h();
      const root = await seedAccount(store);
      await store.ledger.grant(purchased(root, 1_000));
      const capped = await child(store, root, 10);
      await hold(store, capped, 10);
      expect(await reserve(store, capped, 1)).toMatchObject({ reason: 'daily_limit_exceeded', limit: 10 });
      expect((await reserve(store, root, 500)).ok).toBe(true);
      expect(await store.ledger.audit()).toMatchObject({ findings: [] });
    });
  });
}
