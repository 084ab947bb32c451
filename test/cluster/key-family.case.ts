/**
 * One key family (a capped key and the keys it minted, issue 15) spending at once through three gateway
 * processes on one database: the family's spend in the UTC day never passes the creator's cap, whichever
 * instance serves which member, and revoking the creator on one instance refuses every member on the
 * others at their very next request.
 */
import { expect, it } from 'vitest';
import { newId } from '../../src/core/ids.js';
import { createApiKey } from '../../src/keys/key-service.js';
import { ledgerVerify, startCluster, stopInstance, type Instance } from './cluster.js';
import { openClusterStore, rawQuery } from './db.js';

const CAP = 600;
const CHILDREN = 5;
const WORKERS_PER_MEMBER = 4;

interface Outcome {
  status: number;
  code: string | null;
}

function call(instance: Instance, secret: string, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${instance.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(20_000),
  });
}

async function spend(instance: Instance, secret: string, stream: boolean): Promise<Outcome> {
  const res = await call(instance, secret, 'POST', '/chat/completions', {
    model: 'svc-fast',
    max_tokens: 30,
    stream,
    messages: [{ role: 'user', content: 'Say something short.' }],
  });
  const text = await res.text();
  return { status: res.status, code: res.status === 200 ? null : (JSON.parse(text) as { error: { code: string } }).error.code };
}

export function keyFamilyCase(database: () => Promise<{ url: string; dir: string; drop(): Promise<void> }>): void {
  it('a key family spending on 3 instances at once never passes its cap; revoking its creator stops every member everywhere', async () => {
    const db = await database();
    const store = await openClusterStore(db.url);
    let instances: Instance[] = [];
    try {
      const account = await store.keys.createAccount({ id: newId('acct_'), name: 'family' });
      await store.ledger.grant({ accountId: account.id, environment: 'live', kind: 'purchased', amount: 1_000_000, expiresAt: null, idempotencyKey: null });
      const parent = await createApiKey(store.keys, { accountId: account.id, environment: 'live', name: 'parent', dailyCreditLimit: CAP });
      instances = await startCluster({ databaseUrl: db.url, dir: db.dir, instances: 3 });
      const at = (i: number): Instance => instances[i % instances.length] as Instance;

      // Children minted through different instances; a grandchild too.
      const members: string[] = [parent.secret];
      for (let i = 0; i < CHILDREN; i++) {
        const res = await call(at(i), parent.secret, 'POST', '/api-keys', { name: `child-${i}` });
        expect(res.status).toBe(201);
        members.push(((await res.json()) as { secret: string }).secret);
      }
      const res = await call(at(2), members[1] as string, 'POST', '/api-keys', { name: 'grandchild' });
      expect(res.status).toBe(201);
      members.push(((await res.json()) as { secret: string }).secret);

      // Every member, on every instance, spends until refused.
      const outcomes: Outcome[] = [];
      await Promise.all(
        members.flatMap((secret, m) =>
          Array.from({ length: WORKERS_PER_MEMBER }, async (_, w) => {
            for (let n = 0; ; n++) {
              const outcome = await spend(at(m + w + n), secret, (w + n) % 2 === 0);
              outcomes.push(outcome);
              if (outcome.status !== 200) return;
            }
          }),
        ),
      );
      const refused = outcomes.filter((o) => o.status !== 200);
      expect(refused.every((o) => o.status === 402 && o.code === 'daily_credit_limit_exceeded')).toBe(true);
      expect(refused).toHaveLength(members.length * WORKERS_PER_MEMBER);
      const [spent] = await rawQuery<{ credits: string }>(db.url, `SELECT COALESCE(SUM(credits), 0) AS credits FROM usage_events WHERE account_id = '${account.id}'`);
      const served = outcomes.length - refused.length;
      console.log(`[key-family] members ${members.length}; served ${served}; family spend ${spent?.credits} of ${CAP}`);
      expect(served).toBeGreaterThan(members.length);
      expect(Number(spent?.credits)).toBeLessThanOrEqual(CAP);
      // Close to the cap: the family used its budget, not a fraction of it.
      expect(Number(spent?.credits)).toBeGreaterThan(CAP / 2);

      // Revoked on one instance: every member refused on every instance at its next request.
      const revoked = await call(at(0), parent.secret, 'DELETE', `/api-keys/${parent.record.id}`);
      expect(revoked.status).toBe(200);
      const after = await Promise.all(members.map((secret, m) => spend(at(m + 1), secret, false)));
      expect(after).toEqual(members.map(() => ({ status: 401, code: 'revoked_api_key' })));

      expect(await store.ledger.countPendingHolds(account.id)).toBe(0);
      expect(ledgerVerify(db.url)).toMatchObject({ ok: true, findings: [] });
    } finally {
      await Promise.all(instances.map((i) => stopInstance(i)));
      await store.close();
      await db.drop();
    }
  }, 90_000);
}
