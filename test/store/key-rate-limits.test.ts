/** Migration 4: a key's rate limits are stored and read back on both stores; zero and fractions are refused. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { newKey, T0, type StoreHarness } from './cases/harness.js';
import { closeAdmin, openPostgresHarness } from './postgres-harness.js';

async function sqliteHarness(): Promise<StoreHarness> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-gateway-rl-'));
  const clock = new ManualClock(T0);
  const store = createSqliteStore({ path: join(dir, 'gateway.db'), clock });
  return { store, clock, close: async () => (await store.close(), await rm(dir, { recursive: true, force: true })) };
}

afterAll(closeAdmin);

for (const [name, open] of [
  ['sqlite', sqliteHarness],
  ['postgres', openPostgresHarness],
] as const) {
  describe(`key rate limits on ${name}`, () => {
    it('stores rpm_limit and tpm_limit, null by default, and refuses values below 1', async () => {
      const h = await open();
      try {
        await h.store.migrate();
        await h.store.keys.createAccount({ id: 'acct_rl', name: null });
        const limited = await h.store.keys.insertKey({ ...newKey('acct_rl'), rpmLimit: 60, tpmLimit: 90_000 });
        expect(limited).toMatchObject({ rpmLimit: 60, tpmLimit: 90_000 });
        expect(await h.store.keys.findKey(limited.id)).toMatchObject({ rpmLimit: 60, tpmLimit: 90_000 });
        const { rpmLimit: _r, tpmLimit: _t, ...legacy } = newKey('acct_rl');
        const plain = await h.store.keys.insertKey(legacy);
        expect(plain).toMatchObject({ rpmLimit: null, tpmLimit: null });
        expect((await h.store.keys.listActiveKeys('acct_rl')).map((k) => k.rpmLimit)).toEqual([60, null]);
        await expect(h.store.keys.insertKey({ ...newKey('acct_rl'), rpmLimit: 0 })).rejects.toMatchObject({ code: 'invalid_input' });
        await expect(h.store.keys.insertKey({ ...newKey('acct_rl'), tpmLimit: 1.5 })).rejects.toMatchObject({ code: 'invalid_input' });
      } finally {
        await h.close();
      }
    });
  });
}
