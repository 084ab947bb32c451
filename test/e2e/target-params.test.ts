/**
 * Per-target parameters through a real gateway (issue 16): `x-svc-dropped-params`, `server.strict_params`,
 * `server.relay_reasoning`, CORS (`server.cors_origins`), trailing slashes, and failover past a target that
 * refuses a parameter.
 *
 * The upstreams are the recording upstreams of test/helpers/recording-upstream/: OpenAI-compatible `o3` (a
 * reasoning model that answers 400 to temperature, top_p, penalties, logprobs, logit_bias and stop, as
 * OpenAI's does) and `gpt-4o-mini`, and Anthropic for extended thinking; beside them a DeepSeek-style
 * OpenAI-compatible reasoner (test/helpers/reasoner-upstream.ts), which sends `reasoning_content`. Each
 * gateway differs from the others by the server switch under test. The cases of this file run one at a time
 * (vitest's default): the recording's marks rely on it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/schema.js';
import { chat, sseData, startTestGateway, type Seeded, type TestGateway } from '../helpers/gateway.js';
import { anthropicMessagesHandler } from '../helpers/recording-upstream/anthropic-messages.js';
import { isRecord } from '../helpers/recording-upstream/answer-plan.js';
import { openAIChatHandler } from '../helpers/recording-upstream/openai-chat.js';
import { Recording, type Recorded } from '../helpers/recording-upstream/recording.js';
import { startFixtureServer, type FixtureServer } from '../providers/helpers/fixture-server.js';
import { reasonerHandler, REASONING_TEXT } from '../helpers/reasoner-upstream.js';

type Json = Record<string, unknown>;

const DROPPED = 'x-svc-dropped-params';
const ORIGIN = 'https://app.example.com';
const OTHER_ORIGIN = 'https://elsewhere.example.net';

// ---------------------------------------------------------------------------------------------------------
// The upstreams and gateways

const recording = new Recording();
const reasonerBodies: Json[] = [];
let upstreams: FixtureServer;

interface Gateway {
  gw: TestGateway;
  seeded: Seeded;
}

const O3 = { provider: 'openai', model: 'o3' };
const MINI = { provider: 'openai', model: 'gpt-4o-mini' };

/** A gateway over every upstream, with `server` switches and `aliases` of its own. */
async function gatewayWith(server: Json, aliases: Json): Promise<Gateway> {
  const config = parseConfig({
    server,
    // A target that cannot take a request says nothing of its health; no breaker may skip o3 in a later case.
    health: { failure_threshold: 1_000 },
    providers: {
      // No max_tokens_field: o3 must get `max_completion_tokens` by its family (the recording o3 refuses
      // `max_tokens`), gpt-4o-mini `max_tokens`.
      openai: { type: 'openai-compatible', base_url: upstreams.baseUrl('openai'), paid: false },
      anthropic: { type: 'anthropic', base_url: upstreams.baseUrl('anthropic'), api_version: '2023-06-01', paid: false },
      reasoner: { type: 'openai-compatible', base_url: upstreams.baseUrl('reasoner'), paid: false },
    },
    aliases,
  });
  const gw = await startTestGateway({ config });
  const seeded = await gw.seed({ purchased: 10_000_000 });
  return { gw, seeded };
}

/** Aliases of the o3 cases: svc-smart is o3 alone, svc-fast gpt-4o-mini alone, svc-code o3 then gpt-4o-mini. */
const O3_ALIASES = {
  'svc-smart': { targets: [O3] },
  'svc-fast': { targets: [MINI] },
  'svc-code': { targets: [O3, MINI] },
};

/** Aliases of the reasoning cases: svc-smart the DeepSeek-style reasoner, svc-code Claude with thinking. */
const REASONING_ALIASES = {
  'svc-smart': { targets: [{ provider: 'reasoner', model: 'deepseek-reasoner' }] },
  'svc-code': { targets: [{ provider: 'anthropic', model: 'claude-sonnet-4-5' }] },
  'svc-fast': { targets: [MINI] },
};

let lax: Gateway;
let strict: Gateway;
/** svc-smart is, and svc-code starts with, an o3 the operator wrongly declared as taking sampling parameters. */
let misdeclared: Gateway;
let relaying: Gateway;
let silent: Gateway;
let noCors: Gateway;
let listedCors: Gateway;

beforeAll(async () => {
  upstreams = await startFixtureServer({
    openai: openAIChatHandler(recording),
    anthropic: anthropicMessagesHandler(recording),
    reasoner: reasonerHandler(reasonerBodies),
  });
  lax = await gatewayWith({}, O3_ALIASES);
  strict = await gatewayWith({ strict_params: true }, O3_ALIASES);
  const wrongO3 = { ...O3, capabilities: { sampling: true } };
  misdeclared = await gatewayWith({}, { ...O3_ALIASES, 'svc-smart': { targets: [wrongO3] }, 'svc-code': { targets: [wrongO3, MINI] } });
  relaying = await gatewayWith({}, REASONING_ALIASES);
  silent = await gatewayWith({ relay_reasoning: false }, REASONING_ALIASES);
  noCors = await gatewayWith({ cors_origins: [] }, O3_ALIASES);
  listedCors = await gatewayWith({ cors_origins: [ORIGIN] }, O3_ALIASES);
});

afterAll(async () => {
  for (const g of [lax, strict, misdeclared, relaying, silent, noCors, listedCors]) await g?.gw.close();
  await upstreams?.close();
});

// ---------------------------------------------------------------------------------------------------------
// Helpers

const ask = (model: string, extra: Json = {}): Json => ({
  model,
  messages: [{ role: 'user', content: 'Say hello to Ada.' }],
  max_tokens: 200,
  ...extra,
});

async function balance(g: Gateway): Promise<number> {
  return (await g.gw.store.ledger.balance(g.seeded.accountId, 'live')).purchased;
}

interface Svc {
  routed_model: string;
  credits_used: number;
  attempts?: { provider: string; model: string; outcome: string }[];
}

/** The JSON chunks of an SSE body, [DONE] checked and left out. */
function chunksOf(raw: string): Json[] {
  const data = sseData(raw);
  expect(data.at(-1)).toBe('[DONE]');
  return data.slice(0, -1).map((d) => JSON.parse(d) as Json);
}

function svcOfStream(chunks: Json[]): Svc {
  const svc = chunks.find((c) => isRecord(c.svc))?.svc;
  if (!isRecord(svc)) throw new Error('no svc in the stream');
  return svc as unknown as Svc;
}

function deltasOf(chunks: Json[]): Json[] {
  return chunks.flatMap((c) => (Array.isArray(c.choices) ? (c.choices as Json[]) : [])).map((choice) => (isRecord(choice.delta) ? choice.delta : {}));
}

/** The OpenAI-compatible upstream's requests since `mark`, as (model, status, body). */
function openaiSince(mark: number): { model: unknown; status: number; body: Json; error: unknown }[] {
  return recording.since(mark, 'openai').map((r: Recorded) => ({ model: r.body.model, status: r.reply.status, body: r.body, error: r.reply.error }));
}

/** A charged answer took exactly its `credits_used` from the balance. */
async function expectCharged(g: Gateway, before: number, svc: Svc): Promise<void> {
  expect(svc.credits_used).toBeGreaterThan(0);
  expect(await balance(g)).toBe(before - svc.credits_used);
}

// ---------------------------------------------------------------------------------------------------------
// x-svc-dropped-params

describe('x-svc-dropped-params', () => {
  it('names temperature when a client sends 0.2 to o3, which never receives it', async () => {
    const mark = recording.mark();
    const before = await balance(lax);
    const res = await chat(lax.gw, lax.seeded.secret, ask('svc-smart', { temperature: 0.2 }));
    expect(res.status).toBe(200);
    expect(res.headers.get(DROPPED)).toBe('temperature');
    const body = (await res.json()) as { svc: Svc };
    expect(body.svc.routed_model).toBe('openai/o3');
    const upstream = openaiSince(mark);
    expect(upstream.map((u) => [u.model, u.status])).toEqual([['o3', 200]]);
    expect(upstream[0]?.body).not.toHaveProperty('temperature');
    expect(upstream[0]?.body).not.toHaveProperty('top_p');
    await expectCharged(lax, before, body.svc);
  });

  it('names every dropped parameter, comma-separated', async () => {
    const res = await chat(lax.gw, lax.seeded.secret, ask('svc-smart', { temperature: 0.2, top_p: 0.5, presence_penalty: 0.4, stop: ['END'] }));
    expect(res.status).toBe(200);
    expect(res.headers.get(DROPPED)).toBe('temperature, top_p, presence_penalty, stop');
  });

  it.each([
    // [case, model, extra]
    ['o3 with nothing set', 'svc-smart', {}],
    // 1 is the temperature o3 runs at: not sending it loses nothing.
    ['o3 with temperature 1', 'svc-smart', { temperature: 1 }],
    ['gpt-4o-mini with temperature 0.2', 'svc-fast', { temperature: 0.2 }],
  ] as const)('is absent when nothing was dropped: %s', async (_case, model, extra) => {
    const res = await chat(lax.gw, lax.seeded.secret, ask(model, extra));
    expect(res.status).toBe(200);
    expect(res.headers.get(DROPPED)).toBeNull();
    await res.body?.cancel();
  });

  it('is on streaming responses too', async () => {
    const mark = recording.mark();
    const res = await chat(lax.gw, lax.seeded.secret, ask('svc-smart', { temperature: 0.2, stream: true, stream_options: { include_usage: true } }));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(res.headers.get(DROPPED)).toBe('temperature');
    const chunks = chunksOf(await res.text());
    expect(svcOfStream(chunks).routed_model).toBe('openai/o3');
    expect(openaiSince(mark).map((u) => [u.model, u.status, 'temperature' in u.body])).toEqual([['o3', 200, false]]);
  });

  it('is absent from a stream that dropped nothing', async () => {
    const res = await chat(lax.gw, lax.seeded.secret, ask('svc-smart', { stream: true }));
    expect(res.status).toBe(200);
    expect(res.headers.get(DROPPED)).toBeNull();
    chunksOf(await res.text());
  });
});

// ---------------------------------------------------------------------------------------------------------
// strict_params

describe('server.strict_params: true', () => {
  it.each([false, true])('refuses temperature 0.2 to an alias served by o3 alone (stream: %s), holding and charging nothing', async (stream) => {
    const mark = recording.mark();
    const before = await balance(strict);
    const res = await chat(strict.gw, strict.seeded.secret, ask('svc-smart', { temperature: 0.2, stream }));
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = (await res.json()) as { error: Json };
    expect(body.error).toMatchObject({ type: 'invalid_request_error', code: 'unsupported_parameter', param: 'temperature' });
    expect(String(body.error.message)).toMatch(/temperature/);
    // Refused before anything was held or sent.
    expect(openaiSince(mark)).toEqual([]);
    expect(await balance(strict)).toBe(before);
  });

  it('serves from the secondary target gpt-4o-mini, which takes the request whole', async () => {
    const mark = recording.mark();
    const before = await balance(strict);
    const res = await chat(strict.gw, strict.seeded.secret, ask('svc-code', { temperature: 0.2 }));
    expect(res.status).toBe(200);
    expect(res.headers.get(DROPPED)).toBeNull();
    const body = (await res.json()) as { svc: Svc };
    expect(body.svc.routed_model).toBe('openai/gpt-4o-mini');
    // o3 was never called: it would have had to drop the temperature.
    const upstream = openaiSince(mark);
    expect(upstream.map((u) => [u.model, u.status])).toEqual([['gpt-4o-mini', 200]]);
    expect(upstream[0]?.body.temperature).toBe(0.2);
    await expectCharged(strict, before, body.svc);
  });

  it('serves a streaming request from the secondary target too', async () => {
    const mark = recording.mark();
    const res = await chat(strict.gw, strict.seeded.secret, ask('svc-code', { temperature: 0.2, stream: true }));
    expect(res.status).toBe(200);
    expect(res.headers.get(DROPPED)).toBeNull();
    expect(svcOfStream(chunksOf(await res.text())).routed_model).toBe('openai/gpt-4o-mini');
    expect(openaiSince(mark).map((u) => u.model)).toEqual(['gpt-4o-mini']);
  });

  it('serves o3 when nothing would be dropped', async () => {
    const res = await chat(strict.gw, strict.seeded.secret, ask('svc-smart', { temperature: 1, presence_penalty: 0 }));
    expect(res.status).toBe(200);
    expect(((await res.json()) as { svc: Svc }).svc.routed_model).toBe('openai/o3');
  });
});

// ---------------------------------------------------------------------------------------------------------
// relay_reasoning

describe('server.relay_reasoning', () => {
  /** The DeepSeek-style reasoner (svc-smart) and Claude with thinking (svc-code), streamed and not. */
  const CASES = [
    { name: 'reasoning_content from an OpenAI-compatible upstream', model: 'svc-smart', extra: {}, reasoningTokens: 22 },
    // 48: the recording Anthropic upstream's thinking tokens (output_tokens_details).
    { name: 'Anthropic thinking', model: 'svc-code', extra: { reasoning_effort: 'high', max_tokens: 4000 }, reasoningTokens: 48 },
  ] as const;

  /** Whether the answer carried reasoning text, and the reasoning tokens its usage reports. */
  async function answer(g: Gateway, c: (typeof CASES)[number], stream: boolean): Promise<{ reasoning: string[]; content: string; reasoningTokens: unknown }> {
    const res = await chat(g.gw, g.seeded.secret, ask(c.model, { ...c.extra, stream, ...(stream ? { stream_options: { include_usage: true } } : {}) }));
    expect(res.status).toBe(200);
    if (!stream) {
      const body = (await res.json()) as { choices: { message: Json }[]; usage: Json };
      const message = body.choices[0]?.message ?? {};
      return {
        reasoning: 'reasoning_content' in message ? [String(message.reasoning_content)] : [],
        content: String(message.content),
        reasoningTokens: isRecord(body.usage.completion_tokens_details) ? body.usage.completion_tokens_details.reasoning_tokens : undefined,
      };
    }
    const chunks = chunksOf(await res.text());
    const deltas = deltasOf(chunks);
    const usage = chunks.find((c) => isRecord(c.usage))?.usage;
    return {
      reasoning: deltas.filter((d) => 'reasoning_content' in d).map((d) => String(d.reasoning_content)),
      content: deltas.map((d) => (typeof d.content === 'string' ? d.content : '')).join(''),
      reasoningTokens: isRecord(usage) && isRecord(usage.completion_tokens_details) ? usage.completion_tokens_details.reasoning_tokens : undefined,
    };
  }

  describe.each(CASES)('$name', (c) => {
    it.each([false, true])('relayed by default (the control; stream: %s)', async (stream) => {
      const got = await answer(relaying, c, stream);
      expect(got.reasoning.join('').length).toBeGreaterThan(0);
      expect(got.content.length).toBeGreaterThan(0);
      expect(got.reasoningTokens).toBe(c.reasoningTokens);
    });

    it.each([false, true])('false: no reasoning_content in the message or any delta, reasoning tokens still reported (stream: %s)', async (stream) => {
      const before = await balance(silent);
      const got = await answer(silent, c, stream);
      expect(got.reasoning).toEqual([]);
      expect(got.content.length).toBeGreaterThan(0);
      // The reasoning was done and is billed: only its text is withheld.
      expect(got.reasoningTokens).toBe(c.reasoningTokens);
      expect(await balance(silent)).toBeLessThan(before);
    });
  });

  it('false: the text is not relayed even as an empty field', async () => {
    // A stream whose reasoning deltas are withheld sends no empty delta in their place.
    const res = await chat(silent.gw, silent.seeded.secret, ask('svc-smart', { stream: true }));
    const raw = await res.text();
    expect(raw).not.toContain('reasoning_content');
    expect(raw).not.toContain(REASONING_TEXT.trim().split(' ')[0]);
    const empty = deltasOf(chunksOf(raw)).filter((d) => Object.keys(d).length === 0 || (Object.keys(d).length === 1 && d.content === ''));
    // At most the finishing chunk's own empty delta.
    expect(empty.length).toBeLessThanOrEqual(1);
  });
});

// ---------------------------------------------------------------------------------------------------------
// CORS

describe('CORS', () => {
  const preflight = (g: Gateway, origin: string, path = '/chat/completions'): Promise<Response> =>
    fetch(`${g.gw.url}${path}`, {
      method: 'OPTIONS',
      headers: {
        origin,
        'access-control-request-method': 'POST',
        // The openai SDK's own headers must pass too.
        'access-control-request-headers': 'authorization, content-type, x-stainless-os',
      },
    });

  const exposed = (res: Response): string[] => (res.headers.get('access-control-expose-headers') ?? '').split(',').map((h) => h.trim().toLowerCase());

  it('answers a preflight without a key: 204 with the allowed origin, method and headers', async () => {
    const res = await preflight(lax, ORIGIN);
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-methods')?.split(',')).toContain('POST');
    const allowed = (res.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(',');
    expect(allowed).toEqual(expect.arrayContaining(['authorization', 'content-type', 'x-stainless-os']));
  });

  it("a real POST's response lets the page read x-request-id and x-svc-dropped-params", async () => {
    const res = await chat(lax.gw, lax.seeded.secret, ask('svc-smart', { temperature: 0.2 }), {
      headers: { authorization: `Bearer ${lax.seeded.secret}`, 'content-type': 'application/json', origin: ORIGIN },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(exposed(res)).toEqual(expect.arrayContaining(['x-request-id', DROPPED]));
    expect(res.headers.get('x-request-id')).toEqual(expect.any(String));
    expect(res.headers.get(DROPPED)).toBe('temperature');
    await res.body?.cancel();
  });

  it('an error answer carries the CORS headers too, so the page can read it', async () => {
    const res = await fetch(`${lax.gw.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: ORIGIN },
      body: JSON.stringify(ask('svc-smart')),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    await res.body?.cancel();
  });

  it('cors_origins: [] gives no CORS headers, to preflights or answers', async () => {
    const pre = await preflight(noCors, ORIGIN);
    expect(pre.status).not.toBe(204);
    for (const h of ['access-control-allow-origin', 'access-control-allow-methods', 'access-control-allow-headers']) expect(pre.headers.get(h), h).toBeNull();
    await pre.body?.cancel();
    const res = await chat(noCors.gw, noCors.seeded.secret, ask('svc-fast'), {
      headers: { authorization: `Bearer ${noCors.seeded.secret}`, 'content-type': 'application/json', origin: ORIGIN },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect(res.headers.get('access-control-expose-headers')).toBeNull();
    await res.body?.cancel();
  });

  it('a listed origin is echoed, another is not', async () => {
    const listed = await preflight(listedCors, ORIGIN);
    expect(listed.status).toBe(204);
    expect(listed.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    // The answer depends on the Origin: caches must keep one per origin.
    expect(listed.headers.get('vary') ?? '').toMatch(/origin/i);
    const other = await preflight(listedCors, OTHER_ORIGIN);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();

    const post = (origin: string) =>
      chat(listedCors.gw, listedCors.seeded.secret, ask('svc-fast'), {
        headers: { authorization: `Bearer ${listedCors.seeded.secret}`, 'content-type': 'application/json', origin },
      });
    const mine = await post(ORIGIN);
    expect(mine.status).toBe(200);
    expect(mine.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect(mine.headers.get('vary') ?? '').toMatch(/origin/i);
    await mine.body?.cancel();
    const theirs = await post(OTHER_ORIGIN);
    // Served (CORS is the browser's to enforce), but with nothing that lets another origin's page read it.
    expect(theirs.status).toBe(200);
    expect(theirs.headers.get('access-control-allow-origin')).toBeNull();
    await theirs.body?.cancel();
  });
});

// ---------------------------------------------------------------------------------------------------------
// Trailing slash

describe('trailing slash', () => {
  it('POST /v1/chat/completions/ answers as /v1/chat/completions does', async () => {
    const before = await balance(lax);
    const send = (path: string) =>
      fetch(`${lax.gw.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${lax.seeded.secret}`, 'content-type': 'application/json' },
        body: JSON.stringify(ask('svc-fast')),
      });
    const plain = await send('/chat/completions');
    const slashed = await send('/chat/completions/');
    expect([plain.status, slashed.status]).toEqual([200, 200]);
    const [a, b] = (await Promise.all([plain.json(), slashed.json()])) as { object: string; model: string; choices: { message: Json }[]; svc: Svc }[];
    expect(b?.object).toBe('chat.completion');
    expect(b?.model).toBe(a?.model);
    expect(b?.choices[0]?.message.content).toBe(a?.choices[0]?.message.content);
    expect(b?.svc.routed_model).toBe('openai/gpt-4o-mini');
    expect(await balance(lax)).toBe(before - (a?.svc.credits_used ?? 0) - (b?.svc.credits_used ?? 0));
  });

  it('a stream and a preflight on the trailing-slash path work too', async () => {
    const res = await fetch(`${lax.gw.url}/chat/completions/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${lax.seeded.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify(ask('svc-fast', { stream: true })),
    });
    expect(res.status).toBe(200);
    chunksOf(await res.text());
    const pre = await fetch(`${lax.gw.url}/chat/completions/`, {
      method: 'OPTIONS',
      headers: { origin: ORIGIN, 'access-control-request-method': 'POST' },
    });
    expect(pre.status).toBe(204);
  });

  it('GET /v1/models/ lists the models', async () => {
    const res = await fetch(`${lax.gw.url}/models/`, { headers: { authorization: `Bearer ${lax.seeded.secret}` } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { object: string }).object).toBe('list');
  });
});

// ---------------------------------------------------------------------------------------------------------
// Failover past an upstream 400 for an unsupported parameter

describe('an upstream 400 for an unsupported parameter', () => {
  // misdeclared's svc-code: o3 declared as taking sampling, so the gateway sends it temperature 0.7 and the
  // upstream answers 400 unsupported_parameter. That says nothing of gpt-4o-mini, which is tried next.
  it.each([false, true])('on the first target fails over to the second (stream: %s)', async (stream) => {
    const mark = recording.mark();
    const before = await balance(misdeclared);
    const res = await chat(misdeclared.gw, misdeclared.seeded.secret, ask('svc-code', { stream }));
    expect(res.status).toBe(200);
    const svc = stream ? svcOfStream(chunksOf(await res.text())) : ((await res.json()) as { svc: Svc }).svc;
    expect(svc.routed_model).toBe('openai/gpt-4o-mini');
    expect(svc.attempts?.map((a) => [a.model, a.outcome])).toEqual([
      ['o3', 'http_400'],
      ['gpt-4o-mini', expect.any(String)],
    ]);
    const upstream = openaiSince(mark);
    expect(upstream.map((u) => [u.model, u.status])).toEqual([
      ['o3', 400],
      ['gpt-4o-mini', 200],
    ]);
    expect(upstream[0]?.error).toMatchObject({ error: { code: 'unsupported_parameter', param: 'temperature' } });
    // Charged once, for the answer that was served.
    await expectCharged(misdeclared, before, svc);
  });

  it("with no second target, the client gets the upstream's 400 with its code and param, and pays nothing", async () => {
    const mark = recording.mark();
    const before = await balance(misdeclared);
    const res = await chat(misdeclared.gw, misdeclared.seeded.secret, ask('svc-smart'));
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: Json };
    expect(body.error).toMatchObject({ type: 'invalid_request_error', code: 'unsupported_parameter', param: 'temperature' });
    expect(openaiSince(mark).map((u) => [u.model, u.status])).toEqual([['o3', 400]]);
    expect(await balance(misdeclared)).toBe(before);
  });
});

// ---------------------------------------------------------------------------------------------------------
// Values that ask for nothing (see the report: these fail on the gateway as built)

describe('values that ask for nothing are served, and not named', () => {
  it.each([
    // [case, gateway, alias, extra, whether the answer may name a dropped parameter]
    // o3 takes low, medium and high only: `none` must not reach it as is. It cannot stop reasoning either,
    // so mapping `none` to the least effort or dropping it and naming it are both fair.
    ['reasoning_effort none to o3', 'lax', 'svc-smart', { reasoning_effort: 'none' }, true],
    // The o-series answers 400 to `logprobs` and `logit_bias` whatever their value.
    ['logprobs false to o3', 'lax', 'svc-smart', { logprobs: false }, false],
    ['an empty logit_bias to o3', 'lax', 'svc-smart', { logit_bias: {} }, false],
    // gpt-4o-mini does not reason: `none` is what it does anyway, so nothing is lost (docs/api.md: values
    // that ask for nothing are dropped unnamed), and strict_params has nothing to refuse.
    ['reasoning_effort none to gpt-4o-mini', 'lax', 'svc-fast', { reasoning_effort: 'none' }, false],
    ['reasoning_effort none to gpt-4o-mini, strict_params', 'strict', 'svc-fast', { reasoning_effort: 'none' }, false],
  ] as const)('%s', async (_case, which, alias, extra, mayName) => {
    const g = which === 'lax' ? lax : strict;
    const mark = recording.mark();
    const res = await chat(g.gw, g.seeded.secret, ask(alias, extra));
    const text = await res.text();
    expect(res.status, `${text}\nupstream: ${JSON.stringify(openaiSince(mark).map((u) => u.error))}`).toBe(200);
    if (!mayName) expect(res.headers.get(DROPPED)).toBeNull();
  });
});

// ---------------------------------------------------------------------------------------------------------
// tool_choice allowed_tools: the calls are restricted to the named functions on every target

describe('tool_choice allowed_tools', () => {
  const fn = (name: string): Json => ({ type: 'function', function: { name, parameters: { type: 'object', properties: {} } } });

  it('reaches the upstream as the named tools only, with the mode as tool_choice; charged as any answer', async () => {
    const before = await balance(lax);
    const mark = recording.mark();
    const res = await chat(
      lax.gw,
      lax.seeded.secret,
      ask('svc-fast', {
        tools: [fn('get_time'), fn('get_weather'), fn('get_news')],
        tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'required', tools: [{ type: 'function', function: { name: 'get_weather' } }] } },
      }),
    );
    const body = (await res.json()) as Json & { svc: Svc };
    expect(res.status, JSON.stringify(body)).toBe(200);
    const [upstream] = openaiSince(mark);
    expect((upstream?.body.tools as Json[]).map((t) => (t.function as Json).name)).toEqual(['get_weather']);
    expect(upstream?.body.tool_choice).toBe('required');
    await expectCharged(lax, before, body.svc);
  });
});

describe('the output bound by model family (no max_tokens_field in the config)', () => {
  it.each([
    ['svc-smart', 'o3', 'max_completion_tokens', 'max_tokens'],
    ['svc-fast', 'gpt-4o-mini', 'max_tokens', 'max_completion_tokens'],
  ] as const)('%s: %s receives %s, not %s', async (alias, model, sent, absent) => {
    const mark = recording.mark();
    const res = await chat(lax.gw, lax.seeded.secret, ask(alias, { max_completion_tokens: 123, max_tokens: undefined }));
    expect(res.status, await res.text()).toBe(200);
    const [upstream] = openaiSince(mark);
    expect(upstream?.model).toBe(model);
    expect(upstream?.body[sent]).toBe(123);
    expect(upstream?.body).not.toHaveProperty(absent);
  });
});
