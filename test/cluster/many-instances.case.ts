/**
 * Three gateway processes on one database, 2,000 concurrent requests against one account whose credits
 * cover only part of them: streaming and not, clients hanging up mid-stream, capped keys. The ledger
 * must never be observed negative, must equal grants minus settled costs, leave no hold open, keep every
 * key under its cap, and pass `ledger verify`.
 */
import { expect, it } from 'vitest';
import { newId } from '../../src/core/ids.js';
import { createApiKey } from '../../src/keys/key-service.js';
import { StoreError } from '../../src/store/errors.js';
import { startCluster, stopInstance, ledgerVerify, type Instance } from './cluster.js';
import { dailyCounters, openClusterStore } from './db.js';
import { runLoad, type LoadClient } from './load.js';

const GRANT_PURCHASED = 3000;
const GRANT_EARNED = 1000;
const CAP = 150;

export function manyInstancesCase(databaseUrl: () => Promise<{ url: string; dir: string; drop(): Promise<void> }>): void {
  it('keeps every ledger invariant under 2,000 concurrent requests on 3 instances', async () => {
    const db = await databaseUrl();
    const store = await openClusterStore(db.url);
    let instances: Instance[] = [];
    try {
      const account = await store.keys.createAccount({ id: newId('acct_'), name: 'load' });
      await store.ledger.grant({ accountId: account.id, environment: 'live', kind: 'purchased', amount: GRANT_PURCHASED, expiresAt: null, idempotencyKey: null });
      await store.ledger.grant({ accountId: account.id, environment: 'live', kind: 'earned', amount: GRANT_EARNED, expiresAt: Date.now() + 86_400_000, idempotencyKey: null });
      const clients: LoadClient[] = [];
      const capped: string[] = [];
      for (let k = 0; k < 6; k++) {
        const limit = k < 2 ? CAP : null;
        const { record, secret } = await createApiKey(store.keys, { accountId: account.id, environment: 'live', name: `k${k}`, dailyCreditLimit: limit });
        clients.push({ secret });
        if (limit !== null) capped.push(record.id);
      }

      instances = await startCluster({ databaseUrl: db.url, dir: db.dir, instances: 3 });

      let minObserved = Infinity;
      let polling = true;
      const poller = (async () => {
        while (polling) {
          // A sampler: on a saturated machine a read may outlast the store's deadline; skip that sample.
          const b = await store.ledger.balance(account.id, 'live').catch((e: unknown) => {
            if (e instanceof StoreError && e.code === 'unavailable') return null;
            throw e;
          });
          if (b) minObserved = Math.min(minObserved, b.earned, b.purchased, b.reserved);
          await new Promise((r) => setTimeout(r, 5));
        }
      })();
      const started = Date.now();
      const load = await runLoad(instances, clients, { requests: 2000, hangUpRate: 0.2, maxTokens: 24 });
      const wallMs = Date.now() - started;

      // Hung-up streams settle asynchronously on the server: wait until no hold is left.
      const until = Date.now() + 20_000;
      while ((await store.ledger.countPendingHolds(account.id)) > 0 && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 50));
      }
      polling = false;
      await poller;

      const ok = load.statuses.get(200) ?? 0;
      const refused = load.statuses.get(402) ?? 0;
      console.log(
        `[many-instances] wall ${wallMs} ms; statuses ${JSON.stringify([...load.statuses])}; hung up ${load.hungUp}; truncated ${load.truncated}; other errors ${JSON.stringify([...load.otherErrors])}`,
      );
      expect(ok + refused).toBe(2000);
      expect(ok).toBeGreaterThan(100);
      expect(refused).toBeGreaterThan(100);
      expect(load.truncated).toBe(0);
      expect(minObserved).toBeGreaterThanOrEqual(0);

      expect(await store.ledger.countPendingHolds(account.id)).toBe(0);
      const balance = await store.ledger.balance(account.id, 'live');
      const today = new Date().toISOString().slice(0, 10);
      // From yesterday: a run across midnight UTC records its first requests on the day before.
      const since = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
      const rows = await store.usage.rollup({ accountId: account.id, environment: 'live', startDay: since, endDay: today, model: null });
      const settled = rows.reduce((s, r) => s + r.credits, 0);
      expect(balance.reserved).toBe(0);
      expect(balance.earned + balance.purchased).toBe(GRANT_PURCHASED + GRANT_EARNED - settled);

      const counters = await dailyCounters(db.url);
      for (const id of capped) {
        const c = counters.filter((r) => r.key_id === id);
        expect(c.length).toBeGreaterThan(0);
        for (const r of c) expect(r.committed).toBeLessThanOrEqual(CAP);
      }
      expect(ledgerVerify(db.url)).toMatchObject({ ok: true, findings: [] });
    } finally {
      await Promise.all(instances.map((i) => stopInstance(i)));
      await store.close();
      await db.drop();
    }
  }, 120_000);
}
