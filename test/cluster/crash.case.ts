/**
 * kill -9 of one gateway process under load. Its in-flight holds stay pending until their lease runs out;
 * then the reaper of a surviving instance voids them, so the credits come back. Nothing is lost or
 * charged twice, and `ledger verify` stays clean.
 */
import { expect, it } from 'vitest';
import { newId } from '../../src/core/ids.js';
import { createApiKey } from '../../src/keys/key-service.js';
import { ledgerVerify, startCluster, stopInstance, type Instance } from './cluster.js';
import { holdOutcomes, openClusterStore, rawQuery } from './db.js';
import { runLoad } from './load.js';

const GRANT = 5000;
const LEASE_MS = 6000;

export function crashCase(databaseUrl: () => Promise<{ url: string; dir: string; drop(): Promise<void> }>): void {
  it('voids the holds of a killed instance after their lease, and loses no credit', async () => {
    const db = await databaseUrl();
    const store = await openClusterStore(db.url);
    let instances: Instance[] = [];
    try {
      const account = await store.keys.createAccount({ id: newId('acct_'), name: 'crash' });
      await store.ledger.grant({ accountId: account.id, environment: 'live', kind: 'purchased', amount: GRANT, expiresAt: null, idempotencyKey: null });
      // One key per instance (requests go round-robin over both), so the victim's own holds can be counted.
      const keys = await Promise.all(
        [0, 1, 2].map(() => createApiKey(store.keys, { accountId: account.id, environment: 'live', name: null, dailyCreditLimit: null })),
      );

      // Slow answers (~3 s each) so that many requests are in flight at the kill, even on a loaded CI machine
      // where the 300 requests reach the instances spread over a few seconds.
      instances = await startCluster({
        databaseUrl: db.url,
        dir: db.dir,
        instances: 3,
        holdLeaseMs: LEASE_MS,
        reaperIntervalMs: 200,
        pace: { time_to_first_token_ms: 50, tokens_per_second: 10 },
      });
      const started = Date.now();
      const load = runLoad(instances, keys.map((k) => ({ secret: k.secret })), { requests: 300, hangUpRate: 0, maxTokens: 30 });
      // Kill once many requests hold credits, the victim's among them, so it surely dies holding some (on a
      // loaded machine the other instances alone can reach the total first). If the load never gets that
      // dense, kill at the densest moment seen for the victim rather than after its requests have drained.
      const victim = instances[0] as Instance;
      const victimKey = (keys[0] as { record: { id: string } }).record.id;
      let pendingAtKill = 0;
      let victimPending = 0;
      let victimPeak = 0;
      for (const until = Date.now() + 15_000; Date.now() < until; ) {
        await new Promise((r) => setTimeout(r, 20));
        pendingAtKill = await store.ledger.countPendingHolds(account.id);
        const [row] = await rawQuery<{ n: number }>(db.url, `SELECT count(*) AS n FROM holds WHERE status = 'pending' AND key_id = '${victimKey}'`);
        victimPending = Number(row?.n ?? 0);
        if (pendingAtKill >= 150 && victimPending >= 30) break;
        // Past the densest point: the victim's in-flight count has started to fall from a useful peak.
        if (victimPeak >= 10 && victimPending > 0 && victimPending < victimPeak * 0.8) break;
        victimPeak = Math.max(victimPeak, victimPending);
      }
      await stopInstance(victim, 'SIGKILL');
      const result = await load;

      // The victim's holds can only come back through the reaper of a survivor, after the lease.
      const until = Date.now() + LEASE_MS + 15_000;
      while ((await store.ledger.countPendingHolds(account.id)) > 0 && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 100));
      }
      const wallMs = Date.now() - started;
      const lost = result.failuresByInstance.get(victim.url) ?? 0;
      const outcomes = await holdOutcomes(db.url);
      console.log(
        `[crash] wall ${wallMs} ms; pending at kill ${pendingAtKill}; statuses ${JSON.stringify([...result.statuses])}; ` +
          `client errors from the killed instance ${lost}; holds ${JSON.stringify(outcomes)}`,
      );
      // Every hold the reaper voided belongs to a request the killed instance never finished.
      expect(outcomes.voided).toBeGreaterThan(0);
      expect(outcomes.voided).toBeLessThanOrEqual(lost);
      expect(pendingAtKill).toBeGreaterThan(10);
      expect(lost).toBeGreaterThan(0);
      // Only the killed instance's clients saw errors (its cut streams and refused connections).
      expect([...result.failuresByInstance.keys()]).toEqual([victim.url]);
      expect(await store.ledger.countPendingHolds(account.id)).toBe(0);

      const balance = await store.ledger.balance(account.id, 'live');
      const today = new Date().toISOString().slice(0, 10);
      // From yesterday: a run across midnight UTC records its first requests on the day before.
      const since = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
      const rows = await store.usage.rollup({ accountId: account.id, environment: 'live', startDay: since, endDay: today, model: null });
      const settled = rows.reduce((s, r) => s + r.credits, 0);
      expect(balance.reserved).toBe(0);
      expect(balance.purchased).toBe(GRANT - settled);
      // Every request a survivor answered is billed; the killed one's unfinished requests are not.
      expect(rows.reduce((s, r) => s + r.requests, 0)).toBeGreaterThanOrEqual(300 - lost);
      expect(ledgerVerify(db.url)).toMatchObject({ ok: true, findings: [] });
    } finally {
      await Promise.all(instances.map((i) => stopInstance(i)));
      await store.close();
      await db.drop();
    }
  }, 120_000);
}
