/**
 * The Node entry serves the completion doors' POSTs on node:http directly (src/runtime/node/direct-doors.ts)
 * and hands a browser's request (one with an `Origin`) to the Hono app. Both must answer alike: every
 * request here is sent both ways and the answers compared, headers and bodies, success and refusals, a
 * stream and a client that hangs up.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, parseConfig } from '../../src/config/schema.js';
import type { Logger } from '../../src/core/logger.js';
import { pacedSandboxConfig, sseData, startTestGateway, type Seeded, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
let paced: TestGateway;
let seeded: Seeded;
let pacedSeed: Seeded;

beforeAll(async () => {
  const cfg = structuredClone(DEFAULT_CONFIG) as { server?: unknown; providers: { sandbox: { pace: unknown } } };
  cfg.server = { max_body_bytes: 64 * 1024 };
  cfg.providers.sandbox.pace = { time_to_first_token_ms: 0, tokens_per_second: 0 };
  gw = await startTestGateway({ config: parseConfig(cfg) });
  seeded = await gw.seed({ purchased: 1_000_000 });
  paced = await startTestGateway({ config: pacedSandboxConfig(0, 40) });
  pacedSeed = await paced.seed({ purchased: 100_000 });
});
afterAll(async () => {
  await gw.close();
  await paced.close();
});

const ORIGIN = 'https://app.example';
type Path = 'direct' | 'app';
const PATHS: readonly Path[] = ['direct', 'app'];

/** Sent on the direct path, or (with an Origin) through the app. */
function send(path: Path, url: string, init: { headers?: Record<string, string>; body?: string }): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...init.headers, ...(path === 'app' ? { origin: ORIGIN } : {}) },
    ...(init.body !== undefined ? { body: init.body } : {}),
  });
}

/** The headers both paths must agree on: all but the framing's, the date and CORS's. */
function comparable(res: Response): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of res.headers) {
    if (k === 'date' || k === 'content-length' || k === 'keep-alive' || k === 'vary' || k.startsWith('access-control-')) continue;
    out[k] = k === 'x-request-id' && v.startsWith('req_') ? 'req_*' : v;
  }
  return out;
}

/** A body with its per-request values (ids, times, balances) masked. */
function masked(text: string): unknown {
  return JSON.parse(text, (k, v: unknown) =>
    ['id', 'created', 'created_at', 'latency_ms', 'balance_remaining', 'system_fingerprint'].includes(k) && v !== null ? `<${k}>` : v,
  );
}

const chatBody = (extra: object = {}): string =>
  JSON.stringify({ model: 'svc-fast', messages: [{ role: 'user', content: 'Say hello.' }], max_tokens: 20, ...extra });

describe('the direct path and the app answer alike', () => {
  const cases: { name: string; url: (base: string) => string; headers?: (secret: string) => Record<string, string>; body?: string }[] = [
    { name: 'a chat completion', url: (b) => `${b}/chat/completions`, body: chatBody() },
    { name: 'with a trailing slash and a query', url: (b) => `${b}/chat/completions/?api-version=1`, body: chatBody() },
    { name: 'a legacy completion', url: (b) => `${b}/completions`, body: JSON.stringify({ model: 'svc-fast', prompt: 'Say hello.', max_tokens: 20 }) },
    {
      name: 'an Anthropic message',
      url: (b) => `${b}/messages`,
      headers: (s) => ({ 'x-api-key': s, authorization: '' }),
      body: JSON.stringify({ model: 'svc-fast', max_tokens: 20, messages: [{ role: 'user', content: 'Say hello.' }] }),
    },
    { name: 'a Responses answer', url: (b) => `${b}/responses`, body: JSON.stringify({ model: 'svc-fast', input: 'Say hello.', store: false }) },
    { name: 'no key', url: (b) => `${b}/chat/completions`, headers: () => ({ authorization: '' }), body: chatBody() },
    { name: 'a malformed key', url: (b) => `${b}/chat/completions`, headers: () => ({ authorization: 'Bearer svc_live_nope' }), body: chatBody() },
    { name: 'no key on the Anthropic door', url: (b) => `${b}/messages`, headers: () => ({ authorization: '' }), body: '{}' },
    { name: 'invalid JSON', url: (b) => `${b}/chat/completions`, body: '{"model": ' },
    { name: 'an empty body', url: (b) => `${b}/chat/completions`, body: '' },
    { name: 'an unknown model', url: (b) => `${b}/chat/completions`, body: chatBody({ model: 'gpt-nope' }) },
    { name: 'a bad parameter', url: (b) => `${b}/chat/completions`, body: chatBody({ temperature: 'hot' }) },
    { name: 'a body over the limit', url: (b) => `${b}/chat/completions`, body: chatBody({ pad: 'x'.repeat(100 * 1024) }) },
    { name: 'a client-sent request id', url: (b) => `${b}/chat/completions`, headers: () => ({ 'x-request-id': 'parity-42' }), body: chatBody() },
  ];

  for (const c of cases) {
    it(c.name, async () => {
      const answers = [];
      for (const path of PATHS) {
        const headers = { authorization: `Bearer ${seeded.secret}`, ...c.headers?.(seeded.secret) };
        // An empty value stands for a header left out.
        for (const [k, v] of Object.entries(headers)) if (v === '') delete (headers as Record<string, string>)[k];
        const res = await send(path, c.url(gw.url), { headers, ...(c.body !== undefined ? { body: c.body } : {}) });
        answers.push({ status: res.status, headers: comparable(res), body: masked(await res.text()) });
      }
      expect(answers[0]).toEqual(answers[1]);
    });
  }

  it('a stream: the same headers and the same frames', async () => {
    const answers = [];
    for (const path of PATHS) {
      const res = await send(path, `${gw.url}/chat/completions`, {
        headers: { authorization: `Bearer ${seeded.secret}` },
        body: chatBody({ stream: true, stream_options: { include_usage: true } }),
      });
      const frames = sseData(await res.text()).map((d) => (d === '[DONE]' ? d : masked(d)));
      answers.push({ status: res.status, headers: comparable(res), frames });
    }
    expect(answers[0]?.frames.length).toBeGreaterThan(3);
    expect(answers[0]).toEqual(answers[1]);
  });

  it('an idempotent request: the second is the first replayed, on either path', async () => {
    for (const path of PATHS) {
      const headers = { authorization: `Bearer ${seeded.secret}`, 'idempotency-key': `parity-${path}` };
      const first = await send(path, `${gw.url}/chat/completions`, { headers, body: chatBody() });
      const again = await send(path, `${gw.url}/chat/completions`, { headers, body: chatBody() });
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(await again.text()).toBe(await first.text());
    }
  });

  it('a client that hangs up mid-stream: the hold ends once, for what was delivered, on either path', async () => {
    for (const path of PATHS) {
      const before = await paced.store.ledger.balance(pacedSeed.accountId, 'live');
      const abort = new AbortController();
      const res = await fetch(`${paced.url}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${pacedSeed.secret}`, 'content-type': 'application/json', ...(path === 'app' ? { origin: ORIGIN } : {}) },
        body: JSON.stringify({ model: 'svc-fast', messages: [{ role: 'user', content: 'Count slowly.' }], stream: true, max_tokens: 500 }),
        signal: abort.signal,
      });
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      const decoder = new TextDecoder();
      let received = '';
      while ((received.match(/"content":"[^"]+"/g) ?? []).length < 3) {
        const { value } = await reader.read();
        received += decoder.decode(value, { stream: true });
      }
      abort.abort();
      const until = Date.now() + 5000;
      while ((await paced.store.ledger.countPendingHolds(pacedSeed.accountId)) > 0) {
        if (Date.now() > until) throw new Error(`${path}: the hold was not ended`);
        await new Promise((r) => setTimeout(r, 20));
      }
      const after = await paced.store.ledger.balance(pacedSeed.accountId, 'live');
      const charged = before.purchased - after.purchased;
      expect(after.reserved).toBe(0);
      // Charged for a few tokens delivered, far from the 500 held.
      expect(charged).toBeGreaterThan(0);
      expect(charged).toBeLessThan(20);
    }
  });

  it('a body cut before its declared length: nothing held, and the gateway serves on', async () => {
    const before = await gw.store.ledger.balance(seeded.accountId, 'live');
    const { port } = new URL(gw.url);
    await new Promise<void>((resolve) => {
      const req = httpRequest({
        host: '127.0.0.1',
        port: Number(port),
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { authorization: `Bearer ${seeded.secret}`, 'content-type': 'application/json', 'content-length': '1000' },
      });
      req.on('error', () => resolve());
      req.write('{"model": "svc-fast", ');
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 100);
    });
    await new Promise((r) => setTimeout(r, 100));
    expect(await gw.store.ledger.countPendingHolds(seeded.accountId)).toBe(0);
    expect(await gw.store.ledger.balance(seeded.accountId, 'live')).toEqual(before);
    const res = await send('direct', `${gw.url}/chat/completions`, { headers: { authorization: `Bearer ${seeded.secret}` }, body: chatBody() });
    expect(res.status).toBe(200);
  });

  it("two Authorization headers: a malformed one (401) on either path, not the first one's key", async () => {
    const { port } = new URL(gw.url);
    for (const path of PATHS) {
      const status = await new Promise<number>((resolve, reject) => {
        const req = httpRequest(
          {
            host: '127.0.0.1',
            port: Number(port),
            method: 'POST',
            path: '/v1/chat/completions',
            // As a flat list, so the header goes out twice (and Node adds no Host to such a list).
            headers: [
              'host',
              `127.0.0.1:${port}`,
              'authorization',
              `Bearer ${seeded.secret}`,
              'authorization',
              'Bearer svc_live_someone_elses',
              'content-type',
              'application/json',
              'content-length',
              String(Buffer.byteLength(chatBody())),
              ...(path === 'app' ? ['origin', ORIGIN] : []),
            ],
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end(chatBody());
      });
      expect(status, path).toBe(401);
    }
  });

  it('a client that leaves while its hold is reserved: the hold ends, and the gateway serves on', async () => {
    const ledger = gw.store.ledger;
    const reserve = ledger.reserve.bind(ledger);
    // A database round trip long enough for the client to leave during it.
    ledger.reserve = (input) => new Promise((r) => setTimeout(r, 150)).then(() => reserve(input));
    try {
      for (const path of PATHS) {
        const abort = new AbortController();
        const res = fetch(`${gw.url}/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${seeded.secret}`, 'content-type': 'application/json', ...(path === 'app' ? { origin: ORIGIN } : {}) },
          body: chatBody({ stream: true }),
          signal: abort.signal,
        }).catch(() => null);
        setTimeout(() => abort.abort(), 50);
        await res;
        const until = Date.now() + 3000;
        await new Promise((r) => setTimeout(r, 200));
        while ((await ledger.countPendingHolds(seeded.accountId)) > 0) {
          if (Date.now() > until) throw new Error(`${path}: a hold was left pending`);
          await new Promise((r) => setTimeout(r, 20));
        }
      }
    } finally {
      ledger.reserve = reserve;
    }
    const res = await send('direct', `${gw.url}/chat/completions`, { headers: { authorization: `Bearer ${seeded.secret}` }, body: chatBody({ stream: true }) });
    expect(res.status).toBe(200);
    expect(sseData(await res.text()).at(-1)).toBe('[DONE]');
  });

  it('a client that leaves while its key is read: the request is still logged, on either path', async () => {
    const lines: Record<string, unknown>[] = [];
    const logged: Logger = { debug() {}, warn() {}, error() {}, info: (msg, fields) => void (msg === 'request' && lines.push(fields ?? {})) };
    const own = await startTestGateway({ logger: logged });
    try {
      const mine = await own.seed({ purchased: 10_000 });
      const keys = own.store.keys;
      const findKey = keys.findKey.bind(keys);
      keys.findKey = (id) => new Promise((r) => setTimeout(r, 150)).then(() => findKey(id));
      const { port } = new URL(own.url);
      for (const path of PATHS) {
        await new Promise<void>((resolve) => {
          const body = chatBody();
          const req = httpRequest({
            host: '127.0.0.1',
            port: Number(port),
            method: 'POST',
            path: '/v1/chat/completions',
            headers: {
              authorization: `Bearer ${mine.secret}`,
              'content-type': 'application/json',
              'content-length': String(Buffer.byteLength(body)),
              'x-request-id': `left-${path}`,
              ...(path === 'app' ? { origin: ORIGIN } : {}),
            },
          });
          req.on('error', () => undefined);
          req.end(body);
          setTimeout(() => {
            req.destroy();
            resolve();
          }, 50);
        });
      }
      const until = Date.now() + 3000;
      while (lines.length < 2 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      expect(lines.map((l) => l.requestId).sort()).toEqual(['left-app', 'left-direct']);
      expect(await own.store.ledger.countPendingHolds(mine.accountId)).toBe(0);
    } finally {
      await own.close();
    }
  });
});
