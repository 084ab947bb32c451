/**
 * The gateway as a Cloudflare Worker (src/runtime/workers/worker.ts), bundled by wrangler from wrangler.jsonc
 * and run in workerd (miniflare), on the real PostgreSQL: the same black-box HTTP behaviour as the Node
 * server. Models, chat (whole and streamed), credits, usage, keys and revocation on the next request,
 * failover to a second target before the first token against real local upstreams, the ledger's
 * invariants under 500 concurrent requests on one account, and the Cron Trigger that reaps dead holds.
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/config/schema.js';
import { readInPieces } from '../helpers/gateway.js';
import { buildWorkerBundle, removeWorkerBundle, startWorkerdGateway, type WorkerdGateway } from '../helpers/workerd-gateway.js';

let bundle: string;
let gw: WorkerdGateway;
/** The operator token, bound as the Worker's secret SVC_ADMIN_TOKEN. */
const ADMIN_TOKEN = 'edge-operator-token-0123456789abcdef';

function post(path: string, secret: string, body: unknown): Promise<Response> {
  return fetch(`${gw.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
}
function postTo(g: WorkerdGateway, path: string, secret: string, body: unknown): Promise<Response> {
  return fetch(`${g.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
}
function get(path: string, secret: string): Promise<Response> {
  return fetch(`${gw.url}${path}`, { headers: { authorization: `Bearer ${secret}` } });
}

interface Svc {
  credits_used: number;
  balance_remaining: number | null;
  routed_model: string;
  attempts?: { provider: string; model: string; outcome: string }[];
}

beforeAll(async () => {
  bundle = await buildWorkerBundle();
  gw = await startWorkerdGateway(bundle, { bindings: { SVC_ADMIN_TOKEN: ADMIN_TOKEN } });
}, 120_000);
afterAll(async () => {
  await gw?.close();
  await removeWorkerBundle(bundle);
});

/** The operator CLI (the built bin/svc-gateway.js) with --url: it reaches the Worker's admin API, not the database. */
function cli(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // No SVC_DATABASE_URL: nothing but the admin API could serve these commands.
    const env = { PATH: process.env.PATH ?? '', SVC_ADMIN_TOKEN: ADMIN_TOKEN };
    const child = spawn(process.execPath, ['bin/svc-gateway.js', ...args], { env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('the gateway in workerd', () => {
  it('lists the four aliases', async () => {
    const a = await gw.seed({ purchased: 1000 });
    const r = await get('/models', a.secret);
    expect(r.status).toBe(200);
    const body = (await r.json()) as { data: { id: string }[] };
    expect(body.data.map((m) => m.id)).toEqual(['svc-auto', 'svc-fast', 'svc-code', 'svc-smart']);
  });

  it('answers a chat completion, charges it once, and reports it in /v1/credits and /v1/usage', async () => {
    const a = await gw.seed({ purchased: 100_000 });
    const r = await post('/chat/completions', a.secret, { model: 'svc-fast', messages: [{ role: 'user', content: 'Hello from the edge' }], max_tokens: 12 });
    expect(r.status).toBe(200);
    const body = (await r.json()) as { object: string; choices: { message: { content: string } }[]; svc: Svc };
    expect(body.object).toBe('chat.completion');
    expect(body.choices[0]?.message.content.length).toBeGreaterThan(0);
    expect(body.svc.credits_used).toBeGreaterThan(0);
    expect(body.svc.balance_remaining).toBe(100_000 - body.svc.credits_used);
    const credits = (await (await get('/credits', a.secret)).json()) as { total_credits: number; reserved_credits: number };
    expect(credits).toMatchObject({ total_credits: 100_000 - body.svc.credits_used, reserved_credits: 0 });
    const today = new Date().toISOString().slice(0, 10);
    // From yesterday: a run across midnight UTC records its first requests on the day before.
    const since = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const usage = (await (await get(`/usage?start_date=${since}&end_date=${today}`, a.secret)).json()) as { total_requests: number; total_credits_spent: number };
    expect(usage).toMatchObject({ total_requests: 1, total_credits_spent: body.svc.credits_used });
  });

  it('streams without buffering to the end: chunks, the finish with svc, [DONE]', async () => {
    const a = await gw.seed({ purchased: 100_000 });
    const r = await post('/chat/completions', a.secret, { model: 'svc-fast', messages: [{ role: 'user', content: 'Stream it' }], max_tokens: 12, stream: true });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const { text, reads } = await readInPieces(r);
    // The sandbox paces its tokens: a buffered answer would arrive in one piece.
    expect(reads).toBeGreaterThan(2);
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    const events = text.split('\n\n').filter((b) => b.startsWith('data: {')).map((b) => JSON.parse(b.slice(6)) as { svc?: Svc });
    const svc = events.find((e) => e.svc !== undefined)?.svc;
    expect(svc?.credits_used).toBeGreaterThan(0);
    expect(await gw.store.ledger.countPendingHolds(a.accountId)).toBe(0);
  });

  // A client that hangs up: workerd cancels a request's work when its client goes, unless the work is
  // handed to ctx.waitUntil. The completion's owner must still end its hold, charging what the upstream made.
  it.each([false, true])('stream=%s: a client that hangs up mid-answer is charged once, and its hold ends at once', async (stream) => {
    const a = await gw.seed({ purchased: 100_000 });
    const controller = new AbortController();
    const r = await fetch(`${gw.url}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'svc-fast', messages: [{ role: 'user', content: 'A long answer please' }], max_tokens: 200, stream }),
      signal: controller.signal,
    }).catch(() => null);
    if (stream && r !== null) {
      // The first chunk arrived: the upstream accepted the call and is producing.
      await (r.body as ReadableStream<Uint8Array>).getReader().read();
    } else {
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    controller.abort();
    // Within the second, not after a lease and a Cron Trigger: no hold pending, and the work charged.
    let pending = -1;
    for (let i = 0; i < 40 && pending !== 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      pending = await gw.store.ledger.countPendingHolds(a.accountId);
    }
    expect(pending).toBe(0);
    const balance = await gw.store.ledger.balance(a.accountId, 'live');
    expect(balance.reserved).toBe(0);
    expect(balance.purchased).toBeLessThan(100_000);
  });

  it('creates a key, serves it, and refuses it on the next request once revoked', async () => {
    const a = await gw.seed({ purchased: 100_000 });
    const created = await post('/api-keys', a.secret, { name: 'edge' });
    expect(created.status).toBe(201);
    const key = (await created.json()) as { id: string; secret: string };
    expect((await get('/models', key.secret)).status).toBe(200);
    const revoked = await fetch(`${gw.url}/api-keys/${key.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${a.secret}` } });
    expect(revoked.status).toBe(200);
    const refused = await post('/chat/completions', key.secret, { model: 'svc-fast', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 });
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ error: { code: 'revoked_api_key' } });
  });

});

describe('500 concurrent requests on one account in workerd', () => {
  let burst: WorkerdGateway;
  beforeAll(async () => {
    // An unpaced sandbox: the burst is about the ledger, so each request holds its connection only for its
    // ledger work, as it would behind Hyperdrive.
    burst = await startWorkerdGateway(bundle, {
      config: { ...(DEFAULT_CONFIG as Record<string, unknown>), providers: { sandbox: { type: 'sandbox', pace: { time_to_first_token_ms: 0, tokens_per_second: 0 } } } },
    });
  }, 120_000);
  afterAll(async () => {
    await burst?.close();
  });

  // Each request opens its own database connection (a Worker cannot share one across requests); deployed,
  // Hyperdrive pools them. Here the Worker's role may hold WORKER_CONNECTION_LIMIT connections: the requests
  // refused one wait for a slot (src/store/postgres/errors.ts), so all 500 are served or refused for
  // credits, none answered 503.
  it('keeps the ledger whole under 500 concurrent requests on one account: never negative, exact, no hold left', async () => {
    const GRANT = 300;
    const a = await burst.seed({ purchased: GRANT });
    const errors: string[] = [];
    const statuses = await Promise.all(
      Array.from({ length: 500 }, (_, i) =>
        postTo(burst, '/chat/completions', a.secret, { model: 'svc-fast', messages: [{ role: 'user', content: `Request ${i}` }], max_tokens: 40, stream: i % 2 === 0 }).then(
          async (r) => {
            const text = await r.text();
            if (r.status !== 200 && r.status !== 402) errors.push(`${r.status} ${text.slice(0, 200)}`);
            return r.status;
          },
        ),
      ),
    );
    const ok = statuses.filter((s) => s === 200).length;
    const refused = statuses.filter((s) => s === 402).length;
    console.log(`[workerd 500] 200: ${ok}, 402: ${refused}`);
    expect(errors.slice(0, 3)).toEqual([]);
    expect(ok + refused).toBe(500);
    expect(ok).toBeGreaterThan(0);
    expect(await burst.store.ledger.countPendingHolds(a.accountId)).toBe(0);
    const balance = await burst.store.ledger.balance(a.accountId, 'live');
    const today = new Date().toISOString().slice(0, 10);
    // From yesterday: a run across midnight UTC records its first requests on the day before.
    const since = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const rows = await burst.store.usage.rollup({ accountId: a.accountId, environment: 'live', startDay: since, endDay: today, model: null });
    const spent = rows.reduce((s, r) => s + r.credits, 0);
    expect(balance.reserved).toBe(0);
    expect(balance.purchased).toBeGreaterThanOrEqual(0);
    expect(balance.purchased).toBe(GRANT - spent);
    expect(rows.reduce((s, r) => s + r.requests, 0)).toBe(ok);
  }, 120_000);
});

describe('the Cron Trigger in workerd', () => {
  it('voids a hold whose gateway stopped renewing it, once its lease ran out; the credits come back', async () => {
    const a = await gw.seed({ purchased: 500 });
    const held = await gw.store.ledger.reserve({ holdId: `hold_edge_${Date.now()}`, keyId: a.keyId, amount: 200, leaseMs: 1 });
    expect(held.ok).toBe(true);
    expect((await gw.store.ledger.balance(a.accountId, 'live')).reserved).toBe(200);
    await new Promise((r) => setTimeout(r, 50));
    await gw.scheduled();
    // The handler's work runs under waitUntil: give it a moment to land.
    const until = Date.now() + 5_000;
    while ((await gw.store.ledger.countPendingHolds(a.accountId)) > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    expect(await gw.store.ledger.countPendingHolds(a.accountId)).toBe(0);
    const balance = await gw.store.ledger.balance(a.accountId, 'live');
    expect(balance.reserved).toBe(0);
    expect(balance.purchased).toBe(500);
  });
});

describe('failover in workerd', () => {
  let upstreams: Server;
  let edge: WorkerdGateway;

  beforeAll(async () => {
    // Real local upstreams: /down answers 503, /up answers OpenAI's chat completion.
    upstreams = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        if (req.url?.startsWith('/cut/')) {
          // A first token, then the connection drops: the gateway must continue on the next target.
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write(`data: ${JSON.stringify({ id: 'c0', object: 'chat.completion.chunk', created: 1, model: 'cut-model', choices: [{ index: 0, delta: { role: 'assistant', content: 'cut short ' }, finish_reason: null }] })}\n\n`);
          setTimeout(() => res.socket?.destroy(), 50);
          return;
        }
        if (req.url?.startsWith('/down/')) {
          res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'overloaded', type: 'server_error' } }));
          return;
        }
        const stream = (JSON.parse(body) as { stream?: boolean }).stream === true;
        const usage = { prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 };
        if (!stream) {
          res.writeHead(200, { 'content-type': 'application/json' }).end(
            JSON.stringify({ id: 'c1', object: 'chat.completion', created: 1, model: 'up-model', choices: [{ index: 0, message: { role: 'assistant', content: 'from the second' }, finish_reason: 'stop' }], usage }),
          );
          return;
        }
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const chunk = (delta: object, finish: string | null, extra: object = {}) =>
          `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'up-model', choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;
        res.write(chunk({ role: 'assistant', content: 'from ' }, null));
        res.write(chunk({ content: 'the second' }, 'stop'));
        res.write(`data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'up-model', choices: [], usage })}\n\n`);
        res.end('data: [DONE]\n\n');
      });
    });
    await new Promise<void>((resolve) => upstreams.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(upstreams.address() as AddressInfo).port}`;
    const targets = [
      { provider: 'down', model: 'down-model' },
      { provider: 'up', model: 'up-model' },
    ];
    edge = await startWorkerdGateway(bundle, {
      config: {
        providers: {
          down: { type: 'openai-compatible', base_url: `${base}/down/v1`, paid: false },
          up: { type: 'openai-compatible', base_url: `${base}/up/v1`, paid: false },
          cut: { type: 'openai-compatible', base_url: `${base}/cut/v1`, paid: false },
        },
        aliases: {
          'svc-fast': { targets },
          'svc-code': { targets: [{ provider: 'cut', model: 'cut-model' }, { provider: 'up', model: 'up-model' }] },
          'svc-smart': { targets },
        },
      },
    });
  }, 120_000);
  afterAll(async () => {
    await edge?.close();
    await new Promise((resolve) => upstreams?.close(resolve));
  });

  it.each([false, true])('stream=%s: a 503 from the first target goes to the second; one charge', async (stream) => {
    const a = await edge.seed({ purchased: 100_000 });
    const r = await fetch(`${edge.url}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'svc-fast', messages: [{ role: 'user', content: 'fail over' }], max_tokens: 20, stream }),
    });
    expect(r.status).toBe(200);
    const text = await r.text();
    let svc: Svc | undefined;
    let content = '';
    if (stream) {
      for (const block of text.split('\n\n').filter((b) => b.startsWith('data: {'))) {
        const e = JSON.parse(block.slice(6)) as { choices: { delta: { content?: string } }[]; svc?: Svc };
        content += e.choices[0]?.delta.content ?? '';
        svc ??= e.svc;
      }
    } else {
      const body = JSON.parse(text) as { choices: { message: { content: string } }[]; svc: Svc };
      content = body.choices[0]?.message.content ?? '';
      svc = body.svc;
    }
    expect(content).toBe('from the second');
    expect(svc?.routed_model).toBe('up/up-model');
    expect(svc?.attempts?.map((x) => x.outcome)).toEqual(['http_503', 'ok']);
    const balance = await edge.store.ledger.balance(a.accountId, 'live');
    expect(balance.purchased).toBe(100_000 - (svc?.credits_used ?? NaN));
    expect(await edge.store.ledger.countPendingHolds(a.accountId)).toBe(0);
  });

  it('a stream cut after its first token continues on the second target; the client keeps one stream, one charge', async () => {
    const a = await edge.seed({ purchased: 100_000 });
    const r = await fetch(`${edge.url}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'svc-code', messages: [{ role: 'user', content: 'continue me' }], max_tokens: 20, stream: true }),
    });
    expect(r.status).toBe(200);
    const text = await r.text();
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    let content = '';
    let svc: Svc | undefined;
    for (const block of text.split('\n\n').filter((b) => b.startsWith('data: {'))) {
      const e = JSON.parse(block.slice(6)) as { choices: { delta: { content?: string } }[]; svc?: Svc; error?: unknown };
      expect(e.error).toBeUndefined();
      content += e.choices[0]?.delta.content ?? '';
      svc ??= e.svc;
    }
    expect(content.startsWith('cut short ')).toBe(true);
    expect(content.endsWith('from the second')).toBe(true);
    expect(svc?.routed_model).toBe('up/up-model');
    expect(svc?.attempts?.length).toBe(2);
    expect(svc?.attempts?.[0]?.outcome).not.toBe('ok');
    expect(svc?.attempts?.[1]?.outcome).toBe('ok');
    const balance = await edge.store.ledger.balance(a.accountId, 'live');
    expect(balance.purchased).toBe(100_000 - (svc?.credits_used ?? NaN));
    expect(await edge.store.ledger.countPendingHolds(a.accountId)).toBe(0);
  });
});

describe('the operator CLI against the Worker (--url, admin API)', () => {
  it('creates an account, grants credits, creates a key that serves, lists it, and revokes it', async () => {
    const origin = new URL(gw.url).origin;
    const json = async <T>(...args: string[]): Promise<T> => {
      const r = await cli(...args, '--url', origin, '--json');
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      return JSON.parse(r.stdout) as T;
    };
    const account = await json<{ id: string; object: string }>('accounts', 'create', '--name', 'edge team');
    expect(account.object).toBe('account');
    const grant = await json<{ created: boolean; balance: { purchased_credits: number } }>(
      'credits', 'grant', '--account', account.id, '--purchased', '5000', '--idempotency-key', 'edge-grant-1',
    );
    expect(grant).toMatchObject({ created: true, balance: { purchased_credits: 5000 } });
    const human = await cli('credits', 'grant', '--account', account.id, '--purchased', '1', '--url', origin);
    expect(human.stdout).toMatch(/^Granted 1 purchased live credits to acct_\S+\. Balance: 5001 \(0 earned, 5001 purchased\)\.\n$/);
    // The same idempotency key grants once.
    expect(await json<{ created: boolean }>('credits', 'grant', '--account', account.id, '--purchased', '5000', '--idempotency-key', 'edge-grant-1')).toMatchObject({ created: false });
    const key = await json<{ id: string; secret: string }>('keys', 'create', '--account', account.id, '--name', 'edge key');
    expect(key.secret).toMatch(/^svc_live_/);
    const served = await post('/chat/completions', key.secret, { model: 'svc-fast', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 });
    expect(served.status).toBe(200);
    const list = await json<{ data: { id: string }[] }>('keys', 'list', '--account', account.id);
    expect(list.data.map((k) => k.id)).toEqual([key.id]);
    expect(await json<{ deleted: boolean }>('keys', 'revoke', key.id)).toMatchObject({ deleted: true });
    const refused = await post('/chat/completions', key.secret, { model: 'svc-fast', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 });
    expect(refused.status).toBe(401);
    // The books behind the Worker agree with what the CLI was told.
    expect((await gw.store.ledger.balance(account.id, 'live')).reserved).toBe(0);
  });

  it('says what is wrong: a wrong token, a database-only command, no token', async () => {
    const origin = new URL(gw.url).origin;
    const wrong = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, ['bin/svc-gateway.js', 'accounts', 'create', '--url', origin], {
        env: { PATH: process.env.PATH ?? '', SVC_ADMIN_TOKEN: 'x'.repeat(40) },
      });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('close', (code) => resolve({ code, stderr }));
    });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/HTTP 401/);
    const dbOnly = await cli('ledger', 'verify', '--url', origin);
    expect(dbOnly.code).toBe(2);
    expect(dbOnly.stderr).toMatch(/works on the database/);
    const noToken = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, ['bin/svc-gateway.js', 'keys', 'list', '--account', 'acct_x', '--url', origin], { env: { PATH: process.env.PATH ?? '' } });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('close', (code) => resolve({ code, stderr }));
    });
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toMatch(/SVC_ADMIN_TOKEN/);
  });
});

describe('a Worker deployed with a short admin token', () => {
  it('keeps serving its clients, without the admin API (the Node server would refuse to start)', async () => {
    const weak = await startWorkerdGateway(bundle, { bindings: { SVC_ADMIN_TOKEN: 'short' } });
    try {
      const a = await weak.seed({ purchased: 1000 });
      const models = await fetch(`${weak.url}/models`, { headers: { authorization: `Bearer ${a.secret}` } });
      expect(models.status).toBe(200);
      const admin = await fetch(new URL('/admin/v1/accounts', weak.url), { method: 'POST', headers: { authorization: 'Bearer short', 'content-type': 'application/json' }, body: '{}' });
      expect(admin.status).toBe(404);
    } finally {
      await weak.close();
    }
  });
});
