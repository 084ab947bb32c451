/**
 * Issue 16: what an OpenAI-compatible upstream says about its answer reaches the client as it was said, and
 * a request for something only some targets give is served by one that gives it.
 *
 * The real `openai` client talks to a real gateway whose aliases route to the recording upstreams
 * (test/helpers/recording-upstream/):
 *
 * - svc-fast: gpt-4o-mini only. `logprobs` (with `top_logprobs`), `system_fingerprint` and `service_tier`
 *   reach the client exactly as the upstream sent them: on the completion, or per chunk (joined, they are
 *   the whole answer's). Once with the upstream streamed (the default), once called in one piece
 *   (`upstream_streaming: false`), where a streaming client gets the whole answer's logprobs on one chunk.
 * - svc-code: Anthropic claude-sonnet-4-5 first, gpt-4o-mini second. Anthropic has no logprobs: a request
 *   for them is served by gpt-4o-mini without the Anthropic upstream being called (and a run of such
 *   requests does not count against Anthropic's health); without them, Anthropic serves.
 * - svc-smart: Anthropic only. A request for logprobs is refused, 400 `unsupported_parameter` on `logprobs`,
 *   charging nothing.
 *
 * Every expectation about the answer is read from what the upstream recorded it sent.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/schema.js';
import { startTestGateway, type Seeded, type TestGateway } from '../helpers/gateway.js';
import { anthropicMessagesHandler } from '../helpers/recording-upstream/anthropic-messages.js';
import { openAIChatHandler } from '../helpers/recording-upstream/openai-chat.js';
import { Recording, type Recorded, type UpstreamKind, type WireTokenLogprob } from '../helpers/recording-upstream/recording.js';
import { startFixtureServer, type FixtureServer } from '../providers/helpers/fixture-server.js';

type Json = Record<string, unknown>;
type Svc = { svc?: Json };

const OPENAI = { provider: 'openai-chat', model: 'gpt-4o-mini' } as const;
const ANTHROPIC = { provider: 'anthropic', model: 'claude-sonnet-4-5' } as const;
const ROUTED_OPENAI = `${OPENAI.provider}/${OPENAI.model}`;
const ROUTED_ANTHROPIC = `${ANTHROPIC.provider}/${ANTHROPIC.model}`;

/** Multi-byte characters, so the relayed `bytes` are not a copy of the ASCII codes. */
const PROMPT = 'Say hello to Zoë and José, then Ada.';

const recording = new Recording();
let upstreams: FixtureServer;
/** The gateway of most cases; `oneShot` is the same but calls gpt-4o-mini in one piece. */
let gw: TestGateway;
let account: Seeded;
let client: OpenAI;
let oneShot: { gw: TestGateway; client: OpenAI };

async function gateway(upstreamStreaming: boolean): Promise<{ gw: TestGateway; account: Seeded; client: OpenAI }> {
  const config = parseConfig({
    providers: {
      [OPENAI.provider]: { type: 'openai-compatible', base_url: upstreams.baseUrl('openai'), paid: false, upstream_streaming: upstreamStreaming },
      [ANTHROPIC.provider]: { type: 'anthropic', api_version: '2023-06-01', base_url: upstreams.baseUrl('anthropic'), paid: false },
    },
    aliases: {
      'svc-fast': { targets: [OPENAI] },
      'svc-code': { targets: [ANTHROPIC, OPENAI] },
      'svc-smart': { targets: [ANTHROPIC] },
    },
  });
  const g = await startTestGateway({ config });
  const seeded = await g.seed({ purchased: 10_000_000 });
  return { gw: g, account: seeded, client: new OpenAI({ baseURL: g.url, apiKey: seeded.secret, maxRetries: 0 }) };
}

beforeAll(async () => {
  upstreams = await startFixtureServer({ openai: openAIChatHandler(recording), anthropic: anthropicMessagesHandler(recording) });
  ({ gw, account, client } = await gateway(true));
  oneShot = await gateway(false);
});

afterAll(async () => {
  await gw?.close();
  await oneShot?.gw.close();
  await upstreams?.close();
});

/** Upstream requests since `mark`, of one kind. */
function since(mark: number, kind: UpstreamKind): Recorded[] {
  return recording.since(mark, kind);
}

/** The one request of `kind` made since `mark`, answered 200. */
function onlyRequest(mark: number, kind: UpstreamKind): Recorded {
  const records = since(mark, kind);
  expect(records.map((r) => r.reply.status), `${kind} upstream answers`).toEqual([200]);
  return records[0] as Recorded;
}

async function collect(stream: AsyncIterable<OpenAI.ChatCompletionChunk>): Promise<OpenAI.ChatCompletionChunk[]> {
  const chunks: OpenAI.ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

const textOf = (chunks: OpenAI.ChatCompletionChunk[]): string => chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
const svcOf = (chunks: OpenAI.ChatCompletionChunk[]): Json | undefined => chunks.map((c) => (c as Svc).svc).find((s) => s !== undefined);

/** The logprobs of each chunk that carried any, in order. */
function chunkLogprobs(chunks: OpenAI.ChatCompletionChunk[]): OpenAI.ChatCompletionChunk.Choice.Logprobs[] {
  return chunks.flatMap((c) => {
    const lp = c.choices[0]?.logprobs;
    return lp === null || lp === undefined ? [] : [lp];
  });
}

const joinedContent = (chunks: OpenAI.ChatCompletionChunk[]): WireTokenLogprob[] => chunkLogprobs(chunks).flatMap((lp) => (lp.content ?? []) as WireTokenLogprob[]);

// ---------------------------------------------------------------------------------------------------------

describe.each([
  { upstream: 'streamed', streamed: true, client: () => client },
  { upstream: 'called in one piece', streamed: false, client: () => oneShot.client },
])('svc-fast (gpt-4o-mini, $upstream): logprobs, system_fingerprint and service_tier as the upstream sent them', ({ streamed, client }) => {
  it('non-streaming: on the completion', async () => {
    const mark = recording.mark();
    const r = await client().chat.completions.create({ model: 'svc-fast', messages: [{ role: 'user', content: PROMPT }], logprobs: true, top_logprobs: 2 });
    const rec = onlyRequest(mark, 'openai');
    expect(rec.body).toMatchObject({ logprobs: true, top_logprobs: 2 });
    expect(rec.stream, 'how the gateway called the upstream').toBe(streamed);
    const reply = rec.reply;
    // The recording scored every piece of its text with two alternatives: something worth relaying.
    expect(reply.logprobs?.content?.length).toBeGreaterThan(5);
    expect(reply.logprobs?.content?.every((e) => e.top_logprobs.length === 2)).toBe(true);

    expect(r.choices[0]?.message.content).toBe(reply.text);
    expect(r.choices[0]?.logprobs).toEqual(reply.logprobs);
    expect(r.system_fingerprint).toBe(reply.systemFingerprint);
    expect(r.service_tier).toBe(reply.serviceTier);
    expect((r as Svc).svc).toMatchObject({ routed_model: ROUTED_OPENAI });
  });

  it('non-streaming without logprobs: logprobs null, fingerprint and tier still relayed', async () => {
    const mark = recording.mark();
    const r = await client().chat.completions.create({ model: 'svc-fast', messages: [{ role: 'user', content: PROMPT }], service_tier: 'flex' });
    const reply = onlyRequest(mark, 'openai').reply;
    expect(reply.logprobs).toBeNull();
    expect(r.choices[0]?.logprobs).toBeNull();
    // The tier the upstream answered on (it serves `flex` when asked), not one the gateway assumes.
    expect(reply.serviceTier).toBe('flex');
    expect(r.service_tier).toBe(reply.serviceTier);
    expect(r.system_fingerprint).toBe(reply.systemFingerprint);
  });

  it.each([
    { includeUsage: false, tier: undefined },
    { includeUsage: true, tier: 'priority' as const },
  ])('streaming (include_usage $includeUsage, service_tier $tier): per chunk, joined the whole answer', async ({ includeUsage, tier }) => {
    const mark = recording.mark();
    const stream = await client().chat.completions.create({
      model: 'svc-fast',
      messages: [{ role: 'user', content: PROMPT }],
      logprobs: true,
      top_logprobs: 2,
      stream: true,
      ...(includeUsage ? { stream_options: { include_usage: true } } : {}),
      ...(tier ? { service_tier: tier } : {}),
    });
    const chunks = await collect(stream);
    const rec = onlyRequest(mark, 'openai');
    expect(rec.body).toMatchObject({ logprobs: true, top_logprobs: 2 });
    const reply = rec.reply;
    expect(reply.serviceTier).toBe(tier ?? 'default');

    expect(textOf(chunks)).toBe(reply.text);
    // Joined across chunks: exactly the upstream's entries, in order.
    expect(joinedContent(chunks)).toEqual(reply.logprobs?.content);
    // Per chunk: each upstream chunk's logprobs on the gateway chunk that carries its piece of text (an answer
    // in one piece: all of them on the one chunk with all the text).
    expect.soft(chunkLogprobs(chunks), 'logprobs chunk by chunk').toEqual(streamed ? reply.chunkLogprobs : [reply.logprobs]);
    for (const c of chunks) {
      const choice = c.choices[0];
      if (choice?.logprobs?.content == null) continue;
      expect.soft(choice.logprobs.content.map((e) => e.token).join(''), 'a chunk scores its own text').toBe(choice.delta.content);
    }
    // OpenAI repeats both on every chunk; the gateway from the upstream's first chunk on. Its own opening
    // role chunk is written before the upstream said anything, so it may lack them, but never differs.
    const relayed = chunks.slice(1);
    expect(relayed.length).toBeGreaterThan(0);
    expect.soft(relayed.map((c) => c.system_fingerprint), 'system_fingerprint on every relayed chunk').toEqual(relayed.map(() => reply.systemFingerprint));
    expect.soft(relayed.map((c) => c.service_tier), 'service_tier on every relayed chunk').toEqual(relayed.map(() => reply.serviceTier));
    for (const [key, expected] of [['system_fingerprint', reply.systemFingerprint], ['service_tier', reply.serviceTier]] as const) {
      const first = chunks[0]?.[key];
      if (first !== undefined && first !== null) expect.soft(first, `${key} on the opening chunk`).toBe(expected);
    }
    if (includeUsage) expect(chunks.at(-1)?.usage).toMatchObject({ completion_tokens: reply.usage?.completion_tokens });
    expect(svcOf(chunks)).toMatchObject({ routed_model: ROUTED_OPENAI });
  });
});

// ---------------------------------------------------------------------------------------------------------

describe('svc-code (Anthropic, then gpt-4o-mini): logprobs go to the target that has them', () => {
  const ANTHROPIC_SKIPPED = [
    { provider: ANTHROPIC.provider, model: ANTHROPIC.model, outcome: 'unsupported' },
    { provider: OPENAI.provider, model: OPENAI.model, outcome: 'ok' },
  ];

  it('non-streaming and streaming, several times: served by gpt-4o-mini, Anthropic never called', async () => {
    // More refusals than the breaker's threshold (3): they must not count against Anthropic's health (next case).
    for (let round = 0; round < 2; round++) {
      let mark = recording.mark();
      const r = await client.chat.completions.create({ model: 'svc-code', messages: [{ role: 'user', content: PROMPT }], logprobs: true, top_logprobs: 2 });
      expect(since(mark, 'anthropic'), 'requests to Anthropic').toEqual([]);
      let reply = onlyRequest(mark, 'openai').reply;
      expect(r.model).toBe('svc-code');
      expect(r.choices[0]?.message.content).toBe(reply.text);
      expect(r.choices[0]?.logprobs).toEqual(reply.logprobs);
      expect(r.system_fingerprint).toBe(reply.systemFingerprint);
      expect(r.service_tier).toBe(reply.serviceTier);
      expect((r as Svc).svc).toMatchObject({ routed_model: ROUTED_OPENAI, routed_provider: OPENAI.provider, attempts: ANTHROPIC_SKIPPED });

      mark = recording.mark();
      const chunks = await collect(
        await client.chat.completions.create({ model: 'svc-code', messages: [{ role: 'user', content: PROMPT }], logprobs: true, top_logprobs: 2, stream: true }),
      );
      expect(since(mark, 'anthropic'), 'requests to Anthropic').toEqual([]);
      reply = onlyRequest(mark, 'openai').reply;
      expect(textOf(chunks)).toBe(reply.text);
      expect(joinedContent(chunks)).toEqual(reply.logprobs?.content);
      expect(chunks.at(-1)?.system_fingerprint).toBe(reply.systemFingerprint);
      expect(chunks.at(-1)?.service_tier).toBe(reply.serviceTier);
      expect(svcOf(chunks)).toMatchObject({ routed_model: ROUTED_OPENAI, attempts: ANTHROPIC_SKIPPED });
    }
  });

  it.each([{ logprobs: undefined }, { logprobs: false }])('logprobs $logprobs: served by Anthropic', async ({ logprobs }) => {
    const mark = recording.mark();
    const r = await client.chat.completions.create({
      model: 'svc-code',
      messages: [{ role: 'user', content: PROMPT }],
      ...(logprobs !== undefined ? { logprobs } : {}),
    });
    expect(since(mark, 'openai'), 'requests to gpt-4o-mini').toEqual([]);
    const rec = onlyRequest(mark, 'anthropic');
    expect(rec.body).not.toHaveProperty('logprobs');
    expect(r.choices[0]?.message.content).toBe(rec.reply.text);
    expect(r.choices[0]?.logprobs).toBeNull();
    const svc = (r as Svc).svc;
    expect(svc).toMatchObject({ routed_model: ROUTED_ANTHROPIC, routed_provider: ANTHROPIC.provider });
    expect(svc, 'one attempt: no attempts list').not.toHaveProperty('attempts');
  });
});

// ---------------------------------------------------------------------------------------------------------

describe('svc-smart (Anthropic only): logprobs cannot be served', () => {
  it.each([{ stream: false }, { stream: true }])('stream $stream: 400 unsupported_parameter on logprobs, nothing charged', async ({ stream }) => {
    const before = await gw.store.ledger.balance(account.accountId, 'live');
    const mark = recording.mark();
    const error = await client.chat.completions
      .create({ model: 'svc-smart', messages: [{ role: 'user', content: PROMPT }], logprobs: true, top_logprobs: 2, stream })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(OpenAI.APIError);
    const e = error as InstanceType<typeof OpenAI.APIError>;
    expect({ status: e.status, type: e.type, code: e.code }).toEqual({ status: 400, type: 'invalid_request_error', code: 'unsupported_parameter' });
    // The parameter no target takes, named as OpenAI names a refused one (soft: the charge is checked below).
    expect.soft(e.param, `param of: ${e.message}`).toBe('logprobs');
    expect(recording.since(mark), 'upstream requests').toEqual([]);
    const after = await gw.store.ledger.balance(account.accountId, 'live');
    expect(after).toEqual(before);
    expect(after.reserved).toBe(0);
  });
});
