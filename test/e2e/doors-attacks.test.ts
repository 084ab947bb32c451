/**
 * Attacks on the Responses and embeddings doors (src/http/responses.ts, src/responses/, src/http/embeddings.ts,
 * src/embeddings/): what a client can make the gateway do without paying, past its limits, or into a 500.
 * A real gateway (real HTTP, real SQLite) with the instant sandbox and real local HTTP upstreams.
 *
 * A failing test here is a finding (it stays failing until the code is fixed); a passing one shows that a
 * defence holds.
 */
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, parseConfig, type GatewayConfig } from '../../src/config/schema.js';
import { createApiKey } from '../../src/keys/key-service.js';
import type { Environment, SavedResponse } from '../../src/store/types.js';
import { startTestGateway, type Seeded, type TestGateway } from '../helpers/gateway.js';
import { startFixtureServer, type FixtureServer } from '../providers/helpers/fixture-server.js';

type Json = Record<string, unknown>;

/** Credits per 1,000 input tokens of the embedding aliases here. */
const EMBED_PRICE = 100;
/** What the slow OpenAI-compatible embedding upstream says every request cost. */
const SLOW_TOKENS = 50;
/** The body limit of the gateway here: small, so that going past it costs the test little. */
const MAX_BODY = 1024 * 1024;
/** Output tokens of the logprobs upstream's answer. */
const LP_TOKENS = 1000;
/** References in the logprobs fan-out: 200 show the cost (about 65 ms each); 9,999 fit in one body. */
const REFS = 200;

let upstreams: FixtureServer;
let gw: TestGateway;
let a: Seeded;
let t: Seeded;

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function config(overrides: Json = {}): GatewayConfig {
  const base = structuredClone(DEFAULT_CONFIG) as Json & { providers: Json };
  return parseConfig({
    ...base,
    providers: {
      sandbox: { type: 'sandbox', pace: { time_to_first_token_ms: 0, tokens_per_second: 0 } },
      slow: { type: 'openai-compatible', base_url: upstreams.baseUrl('slow') },
      lp: { type: 'openai-compatible', base_url: upstreams.baseUrl('lp') },
    },
    aliases: {
      'svc-fast': { targets: [{ provider: 'sandbox', model: 'sandbox-fast' }] },
      'svc-code': { targets: [{ provider: 'lp', model: 'gpt-4o-mini' }] },
      'svc-smart': { targets: [{ provider: 'sandbox', model: 'sandbox-smart' }] },
    },
    server: { max_body_bytes: MAX_BODY },
    embeddings: {
      'svc-embed': { credits_per_1k_tokens: EMBED_PRICE, targets: [{ provider: 'sandbox', model: 'sandbox-embed' }] },
      'svc-embed-slow': { credits_per_1k_tokens: EMBED_PRICE, targets: [{ provider: 'slow', model: 'text-embedding-3-small' }] },
    },
    ...overrides,
  });
}

beforeAll(async () => {
  upstreams = await startFixtureServer({
    // A whole answer of LP_TOKENS tokens, each with 20 alternatives, as OpenAI answers top_logprobs: 20.
    lp: (_req, res) => {
      const alt = (i: number, j: number) => ({ token: ` t${i}_${j}`, logprob: -j / 7, bytes: [32, 116, 48 + (j % 10)] });
      const content = Array.from({ length: LP_TOKENS }, (_, i) => ({ token: ' tok', logprob: -0.25, bytes: [32, 116, 111, 107], top_logprobs: Array.from({ length: 20 }, (_, j) => alt(i, j)) }));
      sendJson(res, 200, {
        id: 'up-lp',
        object: 'chat.completion',
        created: 0,
        model: 'gpt-4o-mini',
        choices: [{ index: 0, message: { role: 'assistant', content: ' tok'.repeat(LP_TOKENS) }, logprobs: { content }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 10, completion_tokens: LP_TOKENS, total_tokens: 10 + LP_TOKENS },
      });
    },
    // Answers after 400 ms, whoever is still listening: the provider bills it either way.
    slow: (_req, res, raw) => {
      const b = JSON.parse(raw) as { input: string[] };
      setTimeout(() => {
        sendJson(res, 200, {
          object: 'list',
          data: b.input.map((_, index) => ({ object: 'embedding', index, embedding: [0.25, -0.5, 0.75] })),
          model: 'text-embedding-3-small',
          usage: { prompt_tokens: SLOW_TOKENS, total_tokens: SLOW_TOKENS },
        });
      }, 400);
    },
  });
  gw = await startTestGateway({ config: config() });
  a = await gw.seed({ purchased: 10_000_000 });
  t = await gw.seed({ purchased: 10_000_000, environment: 'test' });
});

afterAll(async () => {
  await gw?.close();
  await upstreams?.close();
});

function post(path: string, body: unknown, secret: string = a.secret, init: RequestInit = {}): Promise<Response> {
  return fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    ...init,
  });
}

async function purchased(account: Seeded, environment: Environment = 'live'): Promise<number> {
  return (await gw.store.ledger.balance(account.accountId, environment)).purchased;
}

async function pendingHolds(account: Seeded): Promise<number> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const n = await gw.store.ledger.countPendingHolds(account.accountId);
    if (n === 0 || Date.now() > deadline) return n;
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Counts the door's reads of stored responses while `run` runs. */
async function countingFinds<T>(run: () => Promise<T>): Promise<{ result: T; finds: number }> {
  const store = gw.store.responses;
  const original = store.find.bind(store);
  let finds = 0;
  store.find = (accountId: string, environment: Environment, id: string): Promise<SavedResponse | null> => {
    finds++;
    return original(accountId, environment, id);
  };
  try {
    return { result: await run(), finds };
  } finally {
    store.find = original;
  }
}

/** A PNG whose header says 1 x 1 pixels, padded with junk to `bytes`: held as the smallest image, stored whole. */
function paddedPng(bytes: number): string {
  const head = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489', 'hex');
  return `data:image/png;base64,${Buffer.concat([head, Buffer.alloc(bytes - head.length, 7)]).toString('base64')}`;
}

describe('Responses: stored conversations and item references', () => {
  it('previous_response_id cannot grow a stored conversation (and the upstream prompt) past the body limit a client could send', async () => {
    // Each turn's body is well under the limit: one small image (about 85 tokens at detail low, whatever its bytes).
    const image = paddedPng(400 * 1024);
    let previous: string | null = null;
    let credits = 0;
    const sizes: number[] = [];
    for (let turn = 0; turn < 6; turn++) {
      const body = {
        model: 'svc-fast',
        max_output_tokens: 16,
        input: [{ role: 'user', content: [{ type: 'input_text', text: `turn ${turn}` }, { type: 'input_image', image_url: image, detail: 'low' }] }],
        ...(previous !== null ? { previous_response_id: previous } : {}),
      };
      expect(JSON.stringify(body).length).toBeLessThan(MAX_BODY);
      const res = await post('/responses', body);
      if (res.status !== 200) {
        // Refusing the turn that would carry the conversation past the limit is a right answer.
        expect(res.status).toBeGreaterThanOrEqual(400);
        expect(res.status).toBeLessThan(500);
        break;
      }
      const r = (await res.json()) as { id: string; svc: { credits_used: number } };
      credits += r.svc.credits_used;
      previous = r.id;
      const saved = await gw.store.responses.find(a.accountId, 'live', r.id);
      sizes.push(saved?.conversation.length ?? 0);
    }
    // Before the bound, each turn re-stored every earlier image (storage grew as turns squared) for a credit or
    // two a turn: after 6 turns one row held ~3.3 MB, three times what a client may send. Now the turn that would
    // carry the conversation past the body limit is refused.
    expect(credits).toBeLessThan(20);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(MAX_BODY);
  });

  it('9,999 item_references to one stored response: one read, a 4xx, nothing charged, and little work', async () => {
    const first = (await (await post('/responses', { model: 'svc-fast', input: 'Say something.', max_output_tokens: 16 })).json()) as { output: { id: string; type: string }[] };
    const msg = first.output.find((i) => i.type === 'message');
    expect(msg?.id).toMatch(/^msg_/);
    const before = await purchased(a);
    const { result: res, finds } = await countingFinds(() =>
      post('/responses', { model: 'svc-fast', max_output_tokens: 16, input: [{ role: 'user', content: 'hi' }, ...Array.from({ length: 9_999 }, () => ({ type: 'item_reference', id: msg?.id }))] }),
    );
    // Refused before any prompt is built: the references alone pull more than one body may carry.
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ error: { code: 'conversation_too_large', param: 'input' } });
    expect(finds).toBe(1);
    expect(await purchased(a)).toBe(before);
  });

  it('200 item_references to a stored answer that kept its top_logprobs cost the gateway little work (and block no one)', async () => {
    // One paid answer of LP_TOKENS tokens, asked with top_logprobs: 20 (its output item keeps them all).
    const first = await post('/responses', { model: 'svc-code', input: 'Say something.', top_logprobs: 20 });
    expect(first.status).toBe(200);
    const r = (await first.json()) as { id: string; output: { id: string; type: string }[] };
    const msg = r.output.find((i) => i.type === 'message');
    const saved = await gw.store.responses.find(a.accountId, 'live', r.id);
    // Before the fix, every reference structuredClone()d the whole stored item, its logprobs included (1.4 MB
    // each), before the context check refused the request for free: seconds of one core per request. Now the
    // lookup copy keeps no logprobs (the response object GET answers keeps them), and references are not
    // copied.
    const lookup = JSON.parse(saved?.output ?? '[]') as { type: string; content?: { logprobs?: unknown[] }[] }[];
    const kept = lookup.find((i) => i.type === 'message');
    expect(kept?.content?.every((c) => (c.logprobs ?? []).length === 0)).toBe(true);
    const full = JSON.parse(saved?.body ?? '{}') as { output: { type: string; content?: { logprobs?: unknown[] }[] }[] };
    expect(full.output.find((i) => i.type === 'message')?.content?.[0]?.logprobs?.length).toBeGreaterThan(0);
    const before = await purchased(a);
    const res = await post('/responses', { model: 'svc-code', input: [{ role: 'user', content: 'hi' }, ...Array.from({ length: REFS }, () => ({ type: 'item_reference', id: msg?.id }))] });
    const status = res.status;
    await res.text();
    expect({ status, charged: before - (await purchased(a)) }).toMatchObject({ status: 400, charged: 0 });
  }, 120_000);

  it('a key over its rate limit is refused (429); what it made the door read first is one read per response, bounded like a body', async () => {
    const first = (await (await post('/responses', { model: 'svc-fast', input: 'Say something.', max_output_tokens: 16 })).json()) as { id: string; output: { id: string }[] };
    const { secret } = await createApiKey(gw.store.keys, { accountId: a.accountId, environment: 'live', name: 'rpm-1', rpmLimit: 1, dailyCreditLimit: null });
    expect((await post('/responses', { model: 'svc-fast', input: 'one', max_output_tokens: 16 }, secret)).status).toBe(200);
    const itemId = first.output[0]?.id;
    const { result: res, finds } = await countingFinds(() =>
      post(
        '/responses',
        { model: 'svc-fast', previous_response_id: first.id, max_output_tokens: 16, input: [{ type: 'item_reference', id: itemId }, { role: 'user', content: 'again' }] },
        secret,
      ),
    );
    const status = res.status;
    await res.text();
    // The rate limit counts tokens, so it comes after the prompt is known, as for every door (a body is read
    // and parsed before it too). The stored history read first is bounded: one read per response, at most
    // what one body may carry (conversation_too_large).
    expect(status).toBe(429);
    expect(finds).toBe(1);
  });

  it('an item id forged from another account’s response id, or pointing past its items, is item_not_found; nothing is charged', async () => {
    const b = await gw.seed({ purchased: 1_000 });
    const r = (await (await post('/responses', { model: 'svc-fast', input: 'Secret of A.', max_output_tokens: 16 })).json()) as { id: string };
    const bare = r.id.slice('resp_'.length);
    for (const id of [`msg_${bare}_0`, `fc_${bare}_0`, `rs_${bare}_0`, `msg_${bare}_7`, `msg_${bare}_00`]) {
      const res = await post('/responses', { model: 'svc-fast', input: [{ role: 'user', content: 'x' }, { type: 'item_reference', id }] }, b.secret);
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: { code: 'item_not_found', param: 'input[1].id' } });
    }
    // A's own forged-past-the-end id is unknown too; A's response survives B's attempts.
    const own = await post('/responses', { model: 'svc-fast', input: [{ role: 'user', content: 'x' }, { type: 'item_reference', id: `msg_${bare}_7` }] });
    expect(own.status).toBe(400);
    expect((await fetch(`${gw.url}/responses/${r.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${b.secret}` } })).status).toBe(404);
    expect((await fetch(`${gw.url}/responses/${r.id}`, { headers: { authorization: `Bearer ${a.secret}` } })).status).toBe(200);
    expect(await purchased(b)).toBe(1_000);
  });

  it('a stream the client leaves mid-answer is charged once and not stored', async () => {
    const paced = await startTestGateway({ config: parseConfig({ ...(structuredClone(DEFAULT_CONFIG) as Json), providers: { sandbox: { type: 'sandbox', pace: { time_to_first_token_ms: 0, tokens_per_second: 50 } } } }) });
    try {
      const p = await paced.seed({ purchased: 100_000 });
      const controller = new AbortController();
      const res = await fetch(`${paced.url}/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${p.secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'svc-fast', input: 'Tell me a long story.', max_output_tokens: 500, stream: true }),
        signal: controller.signal,
      });
      const reader = res.body!.getReader();
      let text = '';
      while (!text.includes('response.output_text.delta')) text += new TextDecoder().decode((await reader.read()).value);
      const id = /"id":"(resp_[A-Za-z0-9]+)"/.exec(text)?.[1];
      controller.abort();
      const deadline = Date.now() + 5_000;
      while ((await paced.store.ledger.countPendingHolds(p.accountId)) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      expect(await paced.store.ledger.countPendingHolds(p.accountId)).toBe(0);
      expect((await paced.store.ledger.balance(p.accountId, 'live')).purchased).toBeLessThan(100_000);
      expect(await paced.store.responses.find(p.accountId, 'live', id as string)).toBeNull();
    } finally {
      await paced.close();
    }
  });
});

describe('embeddings', () => {
  it('a test key asking the sandbox for 65,536 dimensions x 400 inputs gets a 4xx, not a 500 it paid for', async () => {
    const before = await purchased(t, 'test');
    const inputs = Array.from({ length: 400 }, (_, i) => `t${i}`);
    const res = await post('/embeddings', { model: 'svc-embed', input: inputs, dimensions: 65_536 }, t.secret);
    const status = res.status;
    const body = await res.text();
    expect(await pendingHolds(t)).toBe(0);
    // What happens: ~9 s of synchronous vector building and JSON.stringify past V8's string limit: 500 internal_error,
    // after the hold was settled (charged).
    expect({ status, charged: before - (await purchased(t, 'test')), body: body.slice(0, 120) }).toMatchObject({ status: 400, charged: 0 });
  }, 120_000);

  it('a client that hangs up during an embedding is charged once, with the upstream count, and its hold ends', async () => {
    const before = await purchased(a);
    const controller = new AbortController();
    const pending = post('/embeddings', { model: 'svc-embed-slow', input: ['one '.repeat(40), 'two '.repeat(40)] }, a.secret, { signal: controller.signal }).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 100));
    controller.abort();
    await pending;
    await new Promise((r) => setTimeout(r, 600));
    expect(await pendingHolds(a)).toBe(0);
    expect(before - (await purchased(a))).toBe(Math.ceil((SLOW_TOKENS * EMBED_PRICE) / 1000));
  });

  it('the embeddings door counts in the key’s rate limit (rpm and tpm) before holding anything', async () => {
    const rpm = await createApiKey(gw.store.keys, { accountId: a.accountId, environment: 'live', name: 'e-rpm', rpmLimit: 1, dailyCreditLimit: null });
    expect((await post('/embeddings', { model: 'svc-embed', input: 'hello' }, rpm.secret)).status).toBe(200);
    const second = await post('/embeddings', { model: 'svc-embed', input: 'hello' }, rpm.secret);
    expect(second.status).toBe(429);
    expect(await second.json()).toMatchObject({ error: { code: 'rate_limit_exceeded' } });
    const tpm = await createApiKey(gw.store.keys, { accountId: a.accountId, environment: 'live', name: 'e-tpm', tpmLimit: 100, dailyCreditLimit: null });
    const big = await post('/embeddings', { model: 'svc-embed', input: Array.from({ length: 50 }, () => 'a'.repeat(30)) }, tpm.secret);
    expect(big.status).toBe(429);
    expect(await gw.store.ledger.countPendingHolds(a.accountId)).toBe(0);
  });

  it('a test key never reaches a paid embedding upstream', async () => {
    const before = upstreams.requests.length;
    const res = await post('/embeddings', { model: 'svc-embed-slow', input: ['x'] }, t.secret);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { svc: { routed_provider: string } }).svc.routed_provider).toBe('sandbox');
    expect(upstreams.requests.length).toBe(before);
  });
});
