/**
 * The database goes away under load and comes back (PostgreSQL behind a TCP proxy that cuts every
 * connection and refuses new ones). The gateways retry every ledger call for about 3 s, so an outage of
 * 5 s is partly ridden out: requests that cannot hold their credits in time get a clear 503; answers
 * already produced are sent (with `svc.settlement: "pending"` when their charge could not be confirmed
 * yet) and their holds settle once the database is back; nothing hangs, is cut or answers 500; the
 * gateways recover without a restart; no hold is left to the reaper and the ledger stays whole.
 */
import { expect, it } from 'vitest';
import { newId } from '../../src/core/ids.js';
import { createApiKey } from '../../src/keys/key-service.js';
import { ledgerVerify, startCluster, stopInstance, type Instance } from './cluster.js';
import { holdOutcomes, openClusterStore } from './db.js';
import type { TcpProxy } from './tcp-proxy.js';

const GRANT = 100_000;

interface Outcome {
  at: number;
  status: number;
  code: string | null;
  ms: number;
}

async function request(instance: Instance, secret: string, i: number): Promise<Outcome> {
  const started = Date.now();
  const stream = i % 2 === 0;
  try {
    const res = await fetch(`${instance.url}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'svc-fast', messages: [{ role: 'user', content: `ping ${i}` }], max_tokens: 8, stream }),
      signal: AbortSignal.timeout(15_000),
    });
    const text = await res.text();
    let code: string | null = null;
    if (res.status !== 200) code = (JSON.parse(text) as { error: { code: string } }).error.code;
    else if (stream && !text.endsWith('data: [DONE]\n\n')) code = 'truncated';
    else if (text.includes('"settlement":"pending"')) code = 'settlement_pending';
    return { at: started, status: res.status, code, ms: Date.now() - started };
  } catch (e) {
    return { at: started, status: -1, code: e instanceof Error ? e.name : 'error', ms: Date.now() - started };
  }
}

export function restartCase(
  database: () => Promise<{ url: string; proxiedUrl: string; proxy: TcpProxy; dir: string; drop(): Promise<void> }>,
): void {
  it('rides out what it can of a database outage, answers 503 for the rest, recovers by itself, and keeps the ledger whole', async () => {
    const db = await database();
    const store = await openClusterStore(db.url);
    let instances: Instance[] = [];
    try {
      const account = await store.keys.createAccount({ id: newId('acct_'), name: 'restart' });
      await store.ledger.grant({ accountId: account.id, environment: 'live', kind: 'purchased', amount: GRANT, expiresAt: null, idempotencyKey: null });
      const { secret } = await createApiKey(store.keys, { accountId: account.id, environment: 'live', name: null, dailyCreditLimit: null });
      instances = await startCluster({
        databaseUrl: db.proxiedUrl,
        dir: db.dir,
        instances: 3,
        // Longer than the outage plus the retries: the holds of answers in flight stay theirs until the
        // settle lands (with a lease shorter than an outage, the reaper may void them first: docs/ledger.md).
        holdLeaseMs: 9000,
        reaperIntervalMs: 200,
        pace: { time_to_first_token_ms: 20, tokens_per_second: 200 },
      });

      const outcomes: Outcome[] = [];
      const t0 = Date.now();
      let i = 0;
      const workers = Array.from({ length: 24 }, async (_, w) => {
        while (Date.now() - t0 < 10_000) {
          outcomes.push(await request(instances[w % instances.length] as Instance, secret, i++));
        }
      });
      await new Promise((r) => setTimeout(r, 2000));
      const downAt = Date.now();
      db.proxy.down();
      // Requests that arrive early in the outage cannot hold their credits within the retries (about 3.9 s
      // of 5 s): each must get a 503. Sent apart from the workers, whose requests in flight at the cut wait
      // out their settles for most of the outage, so whether a worker starts one then is left to chance.
      await new Promise((r) => setTimeout(r, 200));
      const early = Array.from({ length: instances.length }, async (_, n) => {
        const outcome = await request(instances[n] as Instance, secret, i++);
        outcomes.push(outcome);
        return outcome;
      });
      await new Promise((r) => setTimeout(r, 4800));
      const upAt = Date.now();
      db.proxy.up();
      const [earlyOutcomes] = await Promise.all([Promise.all(early), ...workers]);

      const count = (pred: (o: Outcome) => boolean) => outcomes.filter(pred).length;
      const summary = {
        total: outcomes.length,
        ok: count((o) => o.status === 200 && o.code === null),
        unavailable: count((o) => o.status === 503),
        settlementPending: count((o) => o.code === 'settlement_pending'),
        other: [...new Set(outcomes.filter((o) => !(o.status === 200 || o.status === 503)).map((o) => `${o.status}:${o.code}`))],
        slowestMs: Math.max(...outcomes.map((o) => o.ms)),
      };
      console.log(`[restart] ${JSON.stringify(summary)}`);
      const exited = instances.filter((i) => i.child.exitCode !== null || i.child.signalCode !== null);
      if (exited.length > 0) console.log(`[restart] an instance died:\n${exited[0]?.log().slice(-3000)}`);
      expect(exited).toEqual([]);
      expect(summary.other).toEqual([]);
      expect(count((o) => o.code === 'truncated')).toBe(0);
      expect(earlyOutcomes.map((o) => `${o.status}:${o.code}`)).toEqual(earlyOutcomes.map(() => '503:store_unavailable'));
      expect(count((o) => o.at < downAt && o.status === 200)).toBeGreaterThan(0);
      // Requests in flight when the database went away were answered: their settles waited it out.
      expect(count((o) => o.at < downAt && o.at + o.ms > downAt + 500 && o.status === 200)).toBeGreaterThan(0);
      // Recovered without a restart: everything that started a second after the database came back succeeded.
      const after = outcomes.filter((o) => o.at > upAt + 1000);
      expect(after.length).toBeGreaterThan(20);
      expect(after.every((o) => o.status === 200 && o.code === null)).toBe(true);

      // Holds whose charge was pending settle in the background once the database answers: none for the reaper.
      const until = Date.now() + 20_000;
      while ((await store.ledger.countPendingHolds(account.id)) > 0 && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(await store.ledger.countPendingHolds(account.id)).toBe(0);
      const balance = await store.ledger.balance(account.id, 'live');
      const today = new Date().toISOString().slice(0, 10);
      // From yesterday: a run across midnight UTC records its first requests on the day before.
      const since = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
      const rows = await store.usage.rollup({ accountId: account.id, environment: 'live', startDay: since, endDay: today, model: null });
      expect(balance.purchased).toBe(GRANT - rows.reduce((s, r) => s + r.credits, 0));
      const holds = await holdOutcomes(db.url);
      console.log(`[restart] holds ${JSON.stringify(holds)}`);
      // Every answer was charged: only requests that got a 503 (a reserve whose reply was lost) left a hold to void.
      expect(holds.settled).toBe(summary.ok + summary.settlementPending);
      expect(holds.voided ?? 0).toBeLessThanOrEqual(summary.unavailable);
      expect(ledgerVerify(db.url)).toMatchObject({ ok: true, findings: [] });
    } finally {
      await Promise.all(instances.map((i) => stopInstance(i)));
      await store.close();
      await db.drop();
    }
  }, 120_000);
}
