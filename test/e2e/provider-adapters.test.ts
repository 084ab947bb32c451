/**
 * The gateway in front of Anthropic- and Gemini-speaking upstreams (local servers replaying recorded provider
 * output), talked to with the official `openai` client: answers are translated, usage is metered from each
 * provider's own counts, a cut Anthropic stream is continued by Gemini in the same client stream, and a
 * provider configured with `upstream_streaming: false` still serves a streaming client.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { creditCost } from '../../src/billing/pricing.js';
import { parseConfig } from '../../src/config/schema.js';
import { CONTINUE_INSTRUCTION } from '../../src/providers/continuation.js';
import { CATALOG } from '../../src/routing/catalog.js';
import { startTestGateway, type Seeded, type TestGateway } from '../helpers/gateway.js';
import { fixture, sseHead, startFixtureServer, writeInPieces, type FixtureServer } from '../providers/helpers/fixture-server.js';

const ANTHROPIC_STREAM = fixture('stream-text.sse', 'anthropic');
/** Through the "!" delta: the answer has started, and then the connection ends without message_stop. */
const ANTHROPIC_CUT = ANTHROPIC_STREAM.slice(0, ANTHROPIC_STREAM.indexOf('event: content_block_delta', ANTHROPIC_STREAM.indexOf('"!"')));
const GEMINI_STREAM = fixture('stream-text.sse', 'gemini');
const GEMINI_JSON = fixture('generate-content.json', 'gemini');

interface Svc {
  routed_provider: string;
  routed_model: string;
  credits_used: number;
  tokens_metered: { prompt: number; completion: number };
  attempts?: { provider: string; outcome: string; continuation?: boolean }[];
}

let upstreams: FixtureServer;
let gw: TestGateway;
let seeded: Seeded;
let client: OpenAI;

beforeAll(async () => {
  upstreams = await startFixtureServer({
    'anthropic-ok': async (_req, res) => {
      sseHead(res);
      await writeInPieces(res, ANTHROPIC_STREAM);
      res.end();
    },
    'anthropic-cut': async (_req, res) => {
      sseHead(res);
      await writeInPieces(res, ANTHROPIC_CUT);
      res.end();
    },
    'gemini-ok': async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      await writeInPieces(res, GEMINI_STREAM);
      res.end();
    },
    'gemini-json': (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(GEMINI_JSON);
    },
  });
  const base = (name: string) => upstreams.baseUrl(name);
  const config = parseConfig({
    providers: {
      claude: { type: 'anthropic', base_url: base('anthropic-ok'), paid: false },
      'claude-cut': { type: 'anthropic', base_url: base('anthropic-cut'), paid: false },
      gemini: { type: 'gemini', base_url: base('gemini-ok'), paid: false },
      'gemini-oneshot': { type: 'gemini', base_url: base('gemini-json'), paid: false, upstream_streaming: false },
    },
    aliases: {
      'svc-fast': { targets: [{ provider: 'claude', model: 'claude-haiku-4-5' }] },
      'svc-code': {
        targets: [
          { provider: 'claude-cut', model: 'claude-sonnet-4-5' },
          { provider: 'gemini', model: 'gemini-2.5-flash' },
        ],
      },
      'svc-smart': { targets: [{ provider: 'gemini-oneshot', model: 'gemini-2.5-pro' }] },
    },
  });
  gw = await startTestGateway({ config });
  seeded = await gw.seed({ purchased: 100_000 });
  client = new OpenAI({ baseURL: gw.url, apiKey: seeded.secret, maxRetries: 0 });
});
afterAll(async () => {
  await gw.close();
  await upstreams.close();
});

async function balance(): Promise<number> {
  return (await gw.store.ledger.balance(seeded.accountId, 'live')).purchased;
}

describe('Anthropic and Gemini upstreams behind the OpenAI convention', () => {
  it('an Anthropic answer, translated, metered from its own usage', async () => {
    const before = await balance();
    const r = await client.chat.completions.create({
      model: 'svc-fast',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Say hello.' },
      ],
      max_tokens: 64,
    });
    expect(r.choices[0]?.message.content).toBe('Hello! 👋');
    expect(r.choices[0]?.finish_reason).toBe('stop');
    expect(r.usage).toMatchObject({ prompt_tokens: 25, completion_tokens: 15, total_tokens: 40 });
    const svc = (r as unknown as { svc: Svc }).svc;
    expect(svc.routed_model).toBe('claude/claude-haiku-4-5');
    expect(svc.credits_used).toBe(creditCost(CATALOG['svc-fast'], 25, 15));
    expect(before - (await balance())).toBe(svc.credits_used);

    const sent = upstreams.requests.at(-1);
    expect(sent?.path).toBe('/anthropic-ok/v1/messages');
    const body = JSON.parse(sent?.body ?? '{}') as { system: unknown; messages: unknown; stream: boolean; max_tokens: number };
    expect(body).toMatchObject({ system: 'Be brief.', messages: [{ role: 'user', content: [{ type: 'text', text: 'Say hello.' }] }], stream: true, max_tokens: 64 });
  });

  it('a cut Anthropic stream is continued by Gemini in the same client stream', async () => {
    const before = await balance();
    const stream = await client.chat.completions.create({
      model: 'svc-code',
      messages: [{ role: 'user', content: 'Say hello.' }],
      max_tokens: 64,
      stream: true,
    });
    let text = '';
    const ids = new Set<string>();
    let svc: Svc | null = null;
    for await (const chunk of stream) {
      ids.add(chunk.id);
      text += chunk.choices[0]?.delta.content ?? '';
      const extra = chunk as unknown as { svc?: Svc };
      if (extra.svc) svc = extra.svc;
    }
    expect(ids.size).toBe(1);
    expect(text).toBe('Hello!' + 'Hello! How can I help you today? 👋');
    expect(svc?.routed_model).toBe('gemini/gemini-2.5-flash');
    expect(svc?.attempts).toEqual([
      { provider: 'claude-cut', model: 'claude-sonnet-4-5', outcome: 'protocol' },
      { provider: 'gemini', model: 'gemini-2.5-flash', outcome: 'ok', continuation: true },
    ]);
    expect(before - (await balance())).toBe(svc?.credits_used);

    // Gemini was asked to go on from the partial answer, not to start again.
    const sent = upstreams.requests.at(-1);
    expect(sent?.path).toBe('/gemini-ok/v1/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    const contents = (JSON.parse(sent?.body ?? '{}') as { contents: { role: string; parts: { text?: string }[] }[] }).contents;
    expect(contents.map((c) => c.role)).toEqual(['user', 'model', 'user']);
    expect(contents[1]?.parts[0]?.text).toBe('Hello!');
    expect(contents[2]?.parts[0]?.text).toBe(CONTINUE_INSTRUCTION);
  });

  it('a provider called in one piece still serves a streaming client', async () => {
    const stream = await client.chat.completions.create({
      model: 'svc-smart',
      messages: [{ role: 'user', content: 'Say hello.' }],
      max_tokens: 256,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('Hello! How can I help you today?');
    // Thinking tokens are billed as output.
    expect(usage).toMatchObject({ prompt_tokens: 8, completion_tokens: 139 });
    expect(upstreams.requests.at(-1)?.path).toBe('/gemini-json/v1/models/gemini-2.5-pro:generateContent');
  });

  it('an option no target of the route can honour is a clear 400, with no upstream call and no charge', async () => {
    const before = await balance();
    const calls = upstreams.requests.length;
    const res = await fetch(`${gw.url}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${seeded.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'svc-code', messages: [{ role: 'user', content: 'Hi' }], logit_bias: { '50256': -100 } }),
    });
    expect(res.status).toBe(400);
    const err = ((await res.json()) as { error: { code: string; message: string } }).error;
    expect(err.code).toBe('unsupported_parameter');
    expect(err.message).toContain('logit_bias');
    expect(upstreams.requests.length).toBe(calls);
    expect(await balance()).toBe(before);
    expect(await gw.store.ledger.countPendingHolds()).toBe(0);
  });
});
