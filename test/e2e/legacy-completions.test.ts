/**
 * POST /v1/completions, the legacy door (src/openai/legacy-completions.ts), with the real `openai` client's
 * `completions.create`: served by the alias's chat targets (a recording OpenAI-compatible upstream here, so
 * what the target received is checked), in the legacy `text_completion` shape, streaming and not, metered
 * like a chat completion and reported in /v1/usage.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/schema.js';
import { sseData, startTestGateway, type Seeded, type TestGateway } from '../helpers/gateway.js';
import { ANSWER_TEXT, reasonerHandler } from '../helpers/reasoner-upstream.js';
import { openAIChatHandler } from '../helpers/recording-upstream/openai-chat.js';
import { Recording } from '../helpers/recording-upstream/recording.js';
import { startFixtureServer, type FixtureServer } from '../providers/helpers/fixture-server.js';

const recording = new Recording();
let upstreams: FixtureServer;
let gw: TestGateway;
let account: Seeded;
let client: OpenAI;

beforeAll(async () => {
  upstreams = await startFixtureServer({ openai: openAIChatHandler(recording) });
  const target = { provider: 'openai-chat', model: 'gpt-4o-mini' };
  gw = await startTestGateway({
    config: parseConfig({
      providers: { 'openai-chat': { type: 'openai-compatible', base_url: upstreams.baseUrl('openai'), paid: false } },
      aliases: { 'svc-fast': { targets: [target] }, 'svc-code': { targets: [target] }, 'svc-smart': { targets: [target] } },
    }),
  });
  account = await gw.seed({ purchased: 1_000_000 });
  client = new OpenAI({ baseURL: gw.url, apiKey: account.secret, maxRetries: 0 });
});
afterAll(async () => {
  await gw?.close();
  await upstreams?.close();
});

interface Svc {
  credits_used: number;
  tokens_metered: { prompt: number; completion: number };
}

describe('POST /v1/completions', () => {
  it('answers in the text_completion shape, served by a chat target with the prompt as the user message', async () => {
    const mark = recording.mark();
    const r = await client.completions.create({ model: 'svc-fast', prompt: 'Say hello to Ada.', max_tokens: 64 });
    expect(r.object).toBe('text_completion');
    expect(r.id).toMatch(/^cmpl-/);
    expect(r.model).toBe('svc-fast');
    const [sent] = recording.since(mark, 'openai');
    expect(sent?.body.messages).toEqual([{ role: 'user', content: 'Say hello to Ada.' }]);
    expect(r.choices).toHaveLength(1);
    expect(r.choices[0]?.text).toBe(sent?.reply.text);
    expect(r.choices[0]?.finish_reason).toBe('stop');
    expect(r.choices[0]?.logprobs).toBeNull();
    expect(r.usage?.total_tokens).toBe((r.usage?.prompt_tokens ?? 0) + (r.usage?.completion_tokens ?? 0));
    expect((r as unknown as { svc: Svc }).svc.credits_used).toBeGreaterThan(0);
  });

  it("bounds the output at OpenAI's default of 16 tokens when the client sets none", async () => {
    const mark = recording.mark();
    await client.completions.create({ model: 'svc-fast', prompt: 'Write at length about lighthouses.' });
    expect(recording.since(mark, 'openai')[0]?.body.max_tokens).toBe(16);
  });

  it('streams text_completion events, the last with the finish reason and svc, then [DONE]; include_usage adds the usage event last', async () => {
    const mark = recording.mark();
    const stream = await client.completions.create({ model: 'svc-fast', prompt: 'Say hello to Ada.', max_tokens: 64, stream: true, stream_options: { include_usage: true } });
    let text = '';
    const events: OpenAI.Completions.Completion[] = [];
    for await (const e of stream) {
      events.push(e);
      text += e.choices[0]?.text ?? '';
    }
    expect(text).toBe(recording.since(mark, 'openai')[0]?.reply.text);
    expect(events.every((e) => e.object === 'text_completion' && e.id === events[0]?.id)).toBe(true);
    const usage = events.at(-1);
    expect(usage?.choices).toEqual([]);
    expect(usage?.usage?.completion_tokens).toBeGreaterThan(0);
    expect((usage as unknown as { svc: Svc }).svc.tokens_metered.completion).toBe(usage?.usage?.completion_tokens);
    expect(events.at(-2)?.choices[0]?.finish_reason).toBe('stop');
    // No role event (the legacy stream has none), no event without a choice but the usage one.
    expect(events.slice(0, -1).every((e) => e.choices.length === 1)).toBe(true);
  });

  it('streams without include_usage: the finishing event is last and carries svc', async () => {
    const res = await fetch(`${gw.url}/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'svc-fast', prompt: 'Say hello.', max_tokens: 64, stream: true }),
    });
    const data = sseData(await res.text());
    expect(data.at(-1)).toBe('[DONE]');
    const last = JSON.parse(data.at(-2) as string) as { choices: { finish_reason: string }[]; svc?: Svc; usage?: unknown };
    expect(last.choices[0]?.finish_reason).toBe('stop');
    expect(last.svc?.credits_used).toBeGreaterThan(0);
    expect(last).not.toHaveProperty('usage');
  });

  it('logprobs: k asks the target for logprobs with k alternatives, rendered in the legacy form', async () => {
    const mark = recording.mark();
    const r = await client.completions.create({ model: 'svc-fast', prompt: 'Say hello to Ada.', max_tokens: 64, logprobs: 2 });
    const sent = recording.since(mark, 'openai')[0];
    expect(sent?.body).toMatchObject({ logprobs: true, top_logprobs: 2 });
    const lp = r.choices[0]?.logprobs;
    expect(lp?.tokens?.length).toBeGreaterThan(0);
    expect(lp?.tokens?.join('')).toBe(r.choices[0]?.text);
    expect(lp?.token_logprobs?.every((x) => typeof x === 'number' && x <= 0)).toBe(true);
    expect(lp?.top_logprobs?.every((alts) => Object.keys(alts).length === 2)).toBe(true);
    // text_offset: where each token starts in the text.
    const offsets = lp?.text_offset ?? [];
    expect(offsets[0]).toBe(0);
    (lp?.tokens ?? []).forEach((t, i) => i > 0 && expect(offsets[i]).toBe((offsets[i - 1] as number) + (lp?.tokens?.[i - 1]?.length ?? 0)));
  });

  it.each([
    ['several prompts', { prompt: ['a', 'b'] }, 'prompt'],
    ['token ids', { prompt: [1, 2, 3] }, 'prompt'],
    ['echo', { prompt: 'a', echo: true }, 'echo'],
    ['suffix', { prompt: 'a', suffix: 'z' }, 'suffix'],
    ['best_of 2', { prompt: 'a', best_of: 2 }, 'best_of'],
  ])('refuses %s with a 400 naming the parameter, charging nothing', async (_name, extra, param) => {
    const before = await gw.store.ledger.balance(account.accountId, 'live');
    const res = await fetch(`${gw.url}/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'svc-fast', ...extra }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { type: 'invalid_request_error', code: 'unsupported_value', param } });
    expect(await gw.store.ledger.balance(account.accountId, 'live')).toEqual(before);
  });

  it('is metered like a chat completion and reported in /v1/usage under its alias', async () => {
    const today = new Date().toISOString().slice(0, 10);
    // From yesterday: a run across midnight UTC records its first requests on the day before.
    const since = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const usage = async () =>
      (await (await fetch(`${gw.url}/usage?start_date=${since}&end_date=${today}`, { headers: { authorization: `Bearer ${account.secret}` } })).json()) as {
        total_credits_spent: number;
      };
    const before = await usage();
    const r = await client.completions.create({ model: 'svc-code', prompt: 'Say hello.', max_tokens: 32 });
    const charged = (r as unknown as { svc: Svc }).svc.credits_used;
    expect((await usage()).total_credits_spent).toBe(before.total_credits_spent + charged);
  });
});

describe('POST /v1/completions from a reasoning target', () => {
  // A DeepSeek-style target sends its reasoning (`reasoning_content`) before any text. The legacy shape has
  // no place for reasoning, so its encoder writes nothing for those deltas; before the fix the stream's pull
  // then returned having enqueued nothing, was never called again, and the answer hung until the write
  // deadline cut it. The deadline is short here so that a stall shows as one, not as a test timeout.
  const WRITE_TIMEOUT_MS = 3000;
  const reasonerBodies: Record<string, unknown>[] = [];
  let reasoner: FixtureServer;
  let rgw: TestGateway;
  let racct: Seeded;

  beforeAll(async () => {
    reasoner = await startFixtureServer({ reasoner: reasonerHandler(reasonerBodies) });
    const target = { provider: 'reasoner', model: 'deepseek-reasoner' };
    rgw = await startTestGateway({
      config: parseConfig({
        server: { write_timeout_ms: WRITE_TIMEOUT_MS },
        providers: { reasoner: { type: 'openai-compatible', base_url: reasoner.baseUrl('reasoner'), paid: false } },
        aliases: { 'svc-fast': { targets: [target] }, 'svc-code': { targets: [target] }, 'svc-smart': { targets: [target] } },
      }),
    });
    racct = await rgw.seed({ purchased: 1_000_000 });
  });
  afterAll(async () => {
    await rgw?.close();
    await reasoner?.close();
  });

  it.each([false, true])('streams the text promptly and whole, then [DONE], not stalled on the reasoning deltas (include_usage: %s)', async (includeUsage) => {
    const before = await rgw.store.ledger.balance(racct.accountId, 'live');
    const started = performance.now();
    const res = await fetch(`${rgw.url}/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${racct.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'svc-smart', prompt: 'What is two and two?', max_tokens: 200, stream: true, ...(includeUsage ? { stream_options: { include_usage: true } } : {}) }),
    });
    expect(res.status).toBe(200);
    // A stalled stream is cut at the deadline: kept as text, so that the elapsed time is what fails.
    const raw = await res.text().catch((e: unknown) => `(the stream was cut: ${String(e)})`);
    const elapsed = performance.now() - started;
    // Well before the write deadline: the upstream answers at once, so the gateway has no reason to wait.
    expect(elapsed, `the stream took ${Math.round(elapsed)} ms`).toBeLessThan(WRITE_TIMEOUT_MS / 2);
    expect(reasonerBodies.at(-1)?.stream).toBe(true);
    const data = sseData(raw);
    expect(data.at(-1)).toBe('[DONE]');
    const events = data.slice(0, -1).map((d) => JSON.parse(d) as OpenAI.Completions.Completion & { svc?: Svc; error?: unknown });
    expect(events.filter((e) => e.error !== undefined)).toEqual([]);
    // The answer's text exactly, and none of the reasoning (the legacy shape has no field for it).
    expect(events.map((e) => e.choices[0]?.text ?? '').join('')).toBe(ANSWER_TEXT);
    const finishing = includeUsage ? events.at(-2) : events.at(-1);
    expect(finishing?.choices[0]?.finish_reason).toBe('stop');
    const svc = events.find((e) => e.svc !== undefined)?.svc;
    expect(svc?.credits_used).toBeGreaterThan(0);
    // Completed, not cut: charged what the upstream reported (its 22 reasoning tokens among the 30).
    expect(svc?.tokens_metered.completion).toBe(30);
    if (includeUsage) expect(events.at(-1)?.usage?.completion_tokens).toBe(30);
    const after = await rgw.store.ledger.balance(racct.accountId, 'live');
    expect(after.purchased).toBe(before.purchased - (svc?.credits_used ?? NaN));
    expect(after.reserved).toBe(0);
  });
});
