/**
 * Idempotent chat completions on three gateway processes sharing one database: the same `Idempotency-Key`
 * and body, sent one after the other or at once to different instances, streaming and not, is answered
 * identically and charged once (one hold, one usage event). On PostgreSQL, replies the database committed
 * but never delivered (the connection reset right after the reserve's or the settle's statement) are found
 * again by the gateway's retries: one hold, one charge, no 503.
 */
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { newId } from '../../src/core/ids.js';
import { idempotentHoldId } from '../../src/http/idempotency.js';
import { createApiKey } from '../../src/keys/key-service.js';
import type { Store } from '../../src/store/types.js';
import { ledgerVerify, startCluster, startInstance, stopInstance, writeClusterConfig, type Instance } from './cluster.js';
import { openClusterStore, rawQuery } from './db.js';
import type { TcpProxy } from './tcp-proxy.js';

const GRANT = 1_000_000;

interface Db {
  url: string;
  dir: string;
  drop(): Promise<void>;
}

interface Answer {
  status: number;
  body: string;
  replayed: boolean;
  retryAfter: string | null;
}

async function send(instance: Instance, secret: string, key: string, body: object, requestId?: string): Promise<Answer> {
  const res = await fetch(`${instance.url}/chat/completions`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${secret}`,
      'content-type': 'application/json',
      'idempotency-key': key,
      ...(requestId ? { 'x-request-id': requestId } : {}),
    },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });
  return { status: res.status, body: await res.text(), replayed: res.headers.get('idempotent-replayed') === 'true', retryAfter: res.headers.get('retry-after') };
}

const ask = (stream: boolean, content: string) => ({
  model: 'svc-fast',
  messages: [{ role: 'user', content }],
  max_tokens: 40,
  stream,
});

async function seed(store: Store): Promise<{ accountId: string; keyId: string; secret: string }> {
  const account = await store.keys.createAccount({ id: newId('acct_'), name: 'idempotency' });
  await store.ledger.grant({ accountId: account.id, environment: 'live', kind: 'purchased', amount: GRANT, expiresAt: null, idempotencyKey: null });
  const { record, secret } = await createApiKey(store.keys, { accountId: account.id, environment: 'live', name: 'k', dailyCreditLimit: null });
  return { accountId: account.id, keyId: record.id, secret };
}

interface EventRow {
  hold_id: string;
  credits: number;
}

async function usageEventsOf(url: string, accountId: string): Promise<EventRow[]> {
  const rows = await rawQuery<EventRow>(url, `SELECT hold_id, credits FROM usage_events WHERE account_id = '${accountId}' ORDER BY id`);
  return rows.map((r) => ({ hold_id: r.hold_id, credits: Number(r.credits) }));
}

async function holdsOf(url: string, accountId: string): Promise<{ id: string; status: string }[]> {
  return rawQuery<{ id: string; status: string }>(url, `SELECT id, status FROM holds WHERE account_id = '${accountId}' ORDER BY id`);
}

/** Balance = grant - usage events, nothing pending, the audit clean. */
async function expectBooks(store: Store, url: string, accountId: string): Promise<void> {
  const until = Date.now() + 10_000;
  while ((await store.ledger.countPendingHolds(accountId)) > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  expect(await store.ledger.countPendingHolds(accountId)).toBe(0);
  const spent = (await usageEventsOf(url, accountId)).reduce((n, e) => n + e.credits, 0);
  const b = await store.ledger.balance(accountId, 'live');
  expect(b.purchased + b.earned).toBe(GRANT - spent);
  expect(ledgerVerify(url)).toMatchObject({ ok: true, findings: [] });
}

export function idempotencyCase(database: () => Promise<Db>): void {
  it('the same Idempotency-Key and body, sequential and concurrent, on 3 instances: identical answers, one charge', async () => {
    const db = await database();
    const store = await openClusterStore(db.url);
    let instances: Instance[] = [];
    try {
      const s = await seed(store);
      // Slow enough that a concurrent duplicate arrives while the first is still running.
      instances = await startCluster({ databaseUrl: db.url, dir: db.dir, instances: 3, pace: { time_to_first_token_ms: 20, tokens_per_second: 200 } });
      const [a, b, c] = instances as [Instance, Instance, Instance];

      for (const stream of [false, true]) {
        // Sequential: the second is the first answer replayed, byte for byte.
        const key = randomUUID();
        const body = ask(stream, `Name three lighthouses (${stream ? 'stream' : 'json'}).`);
        const first = await send(a, s.secret, key, body);
        expect(first.status).toBe(200);
        expect(first.replayed).toBe(false);
        const again = await send(b, s.secret, key, body);
        expect(again).toMatchObject({ status: 200, body: first.body, replayed: true });
        if (stream) expect(first.body.endsWith('data: [DONE]\n\n')).toBe(true);

        // Another body under the same key: refused.
        const other = await send(c, s.secret, key, ask(stream, 'Something else entirely.'));
        expect(other.status).toBe(409);
        expect(JSON.parse(other.body).error.code).toBe('idempotency_key_reused');

        // Concurrent: one runs, the others are told to retry, then get the same answer.
        const key2 = randomUUID();
        const body2 = ask(stream, `Describe a storm at sea (${stream ? 'stream' : 'json'}).`);
        const together = await Promise.all([a, b, c].map((i) => send(i, s.secret, key2, body2)));
        const ran = together.filter((t) => t.status === 200 && !t.replayed);
        const busy = together.filter((t) => t.status === 409);
        expect(ran).toHaveLength(1);
        for (const t of busy) {
          expect(JSON.parse(t.body).error.code).toBe('idempotency_key_in_use');
          expect(Number(t.retryAfter)).toBeGreaterThanOrEqual(1);
        }
        for (const t of together.filter((x) => x.replayed)) expect(t.body).toBe(ran[0]?.body);
        const retried = await send(c, s.secret, key2, body2);
        expect(retried).toMatchObject({ status: 200, replayed: true, body: ran[0]?.body });
      }

      // Four logical requests: four holds (derived from their keys), four usage events, nothing else.
      const events = await usageEventsOf(db.url, s.accountId);
      expect(events).toHaveLength(4);
      expect(new Set(events.map((e) => e.hold_id)).size).toBe(4);
      for (const e of events) expect(e.hold_id.startsWith('hold_idem_')).toBe(true);
      expect(await holdsOf(db.url, s.accountId)).toHaveLength(4);
      await expectBooks(store, db.url, s.accountId);
    } finally {
      await Promise.all(instances.map((i) => stopInstance(i)));
      await store.close();
      await db.drop();
    }
  });
}

/** PostgreSQL only: the database commits, then the connection resets before the reply. */
export function lostReplyCase(database: () => Promise<Db & { proxiedUrl: string; proxy: TcpProxy }>): void {
  it('a reserve or settle whose reply was lost is found again: one hold, one charge, no 503', async () => {
    const db = await database();
    const store = await openClusterStore(db.url);
    let instance: Instance | null = null;
    try {
      const s = await seed(store);
      const config = writeClusterConfig({ databaseUrl: db.proxiedUrl, dir: db.dir, instances: 1 });
      instance = await startInstance(db.proxiedUrl, config);

      // The settle: its statement carries the request id (the usage event's), which only it sends.
      for (const stream of [false, true]) {
        const key = randomUUID();
        const requestId = `req_lost_settle_${stream ? 's' : 'j'}_${randomUUID().slice(0, 8)}`;
        const lost = db.proxy.loseReplyTo(requestId);
        const body = ask(stream, `Lost settle reply (${stream ? 'stream' : 'json'}).`);
        const first = await send(instance, s.secret, key, body, requestId);
        await lost;
        expect(first.status).toBe(200);
        expect(first.body).not.toContain('store_unavailable');
        const svc = stream
          ? JSON.parse(first.body.split('\n\n').filter((b) => b.includes('"svc"')).at(-1)?.slice(6) ?? '{}').svc
          : JSON.parse(first.body).svc;
        expect(svc.credits_used).toBeGreaterThan(0);
        const holdId = await idempotentHoldId(s.keyId, key);
        const [event] = (await usageEventsOf(db.url, s.accountId)).filter((e) => e.hold_id === holdId);
        expect(event?.credits).toBe(svc.credits_used);
        const again = await send(instance, s.secret, key, body);
        expect(again).toMatchObject({ status: 200, replayed: true, body: first.body });
      }

      // The reserve: the first statement that carries the request's hold id.
      const key = randomUUID();
      const holdId = await idempotentHoldId(s.keyId, key);
      const lost = db.proxy.loseReplyTo(holdId);
      const answer = await send(instance, s.secret, key, ask(false, 'Lost reserve reply.'));
      await lost;
      expect(answer.status).toBe(200);
      expect((await holdsOf(db.url, s.accountId)).filter((h) => h.id.startsWith(holdId))).toEqual([{ id: holdId, status: 'settled' }]);

      const events = await usageEventsOf(db.url, s.accountId);
      expect(events).toHaveLength(3);
      expect(await holdsOf(db.url, s.accountId)).toHaveLength(3);
      await expectBooks(store, db.url, s.accountId);
    } finally {
      if (instance) await stopInstance(instance);
      await store.close();
      await db.drop();
    }
  });
}
