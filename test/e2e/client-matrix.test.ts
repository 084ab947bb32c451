/**
 * Issue 16's client matrix: the client libraries people use, unmodified but for base URL and key, against
 * a real gateway whose aliases route to recording upstreams of each kind (test/helpers/recording-upstream/):
 * OpenAI-compatible `o3` (a reasoning model that refuses sampling options and `max_tokens`) and
 * `gpt-4o-mini`, Anthropic `claude-sonnet-4-5` on both API versions, and Gemini `gemini-2.5-flash`.
 *
 * Each client does a plain answer, a streamed answer, a two-turn tool loop, JSON-schema output and a
 * reasoning request (streamed and not). Three things are checked for each call:
 *
 * - what the client library made of the answer (its own API: text, tool calls, parsed object, usage, reasoning);
 * - what the gateway put on the wire to the client (read through a tapping `fetch` handed to each client):
 *   `model` is the alias, `svc` present and where issue 16 puts it in a stream, usage details and reasoning
 *   text exactly as the upstream reported them;
 * - what the upstream received: exactly the parameters that target takes (the spec's temperature 0.7 and
 *   top_p 1 only where the target takes sampling, `reasoning_effort` in each provider's own terms).
 *
 * The upstreams decide their answers from the request alone (answer-plan.ts) and record what they answered,
 * so every expectation is read from the recording rather than written twice. The gateway-side checks are
 * `expect.soft`: a failing case lists everything the gateway got wrong in it, not only the first thing.
 * The cases of this file run one at a time (vitest's default), which the recording's marks rely on.
 */
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { AIMessage, AIMessageChunk, HumanMessage, type BaseMessage } from '@langchain/core/messages';
import { tool as langchainTool } from '@langchain/core/tools';
import { ChatOpenAI } from '@langchain/openai';
import { generateText, Output, stepCountIs, streamText, tool as aiTool, type LanguageModel, type LanguageModelUsage } from 'ai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseConfig, type TierAlias } from '../../src/config/schema.js';
import { sseData, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { anthropicMessagesHandler } from '../helpers/recording-upstream/anthropic-messages.js';
import { isRecord } from '../helpers/recording-upstream/answer-plan.js';
import { geminiGenerateHandler } from '../helpers/recording-upstream/gemini-generate.js';
import { openAIChatHandler } from '../helpers/recording-upstream/openai-chat.js';
import { Recording, type ExpectedUsage, type Recorded, type UpstreamKind } from '../helpers/recording-upstream/recording.js';
import { startFixtureServer, type FixtureServer } from '../providers/helpers/fixture-server.js';

type Json = Record<string, unknown>;

// ---------------------------------------------------------------------------------------------------------
// The targets

interface Target {
  name: string;
  kind: UpstreamKind;
  /** The config's provider name, so `svc.routed_model` is `<provider>/<model>`. */
  provider: string;
  providerConfig: Json;
  model: string;
  /** The alias clients ask for; every tier of this target's gateway routes to it. */
  alias: TierAlias;
  /** Checks one upstream request body against what this target takes. */
  expectParams(body: Json, call: { reasoning: boolean }): void;
}

/** What a reasoning request asks for, in every client's terms. */
const EFFORT = 'high';

/** `thinking` as Anthropic takes it: a budget of at least 1024 below the output bound. */
function expectThinking(body: Json): void {
  expect.soft(body.thinking).toEqual({ type: 'enabled', budget_tokens: expect.any(Number) });
  const budget = isRecord(body.thinking) ? body.thinking.budget_tokens : undefined;
  expect.soft(Number.isInteger(budget) && (budget as number) >= 1024, `budget_tokens ${String(budget)} >= 1024`).toBe(true);
  expect.soft(budget).toBeLessThan(body.max_tokens as number);
}

const TARGETS: Target[] = [
  {
    name: 'OpenAI-compatible o3',
    kind: 'openai',
    provider: 'openai-reasoning',
    providerConfig: { type: 'openai-compatible', max_tokens_field: 'max_completion_tokens' },
    model: 'o3',
    alias: 'svc-smart',
    expectParams(body, { reasoning }) {
      // o-series models answer 400 to any sampling option: none may be sent, default or not.
      for (const key of ['temperature', 'top_p', 'presence_penalty', 'frequency_penalty', 'logprobs', 'stop', 'max_tokens']) {
        expect.soft(body, key).not.toHaveProperty(key);
      }
      expect.soft(body.max_completion_tokens).toEqual(expect.any(Number));
      if (reasoning) expect.soft(body.reasoning_effort).toBe(EFFORT);
      else expect.soft(body).not.toHaveProperty('reasoning_effort');
    },
  },
  {
    name: 'OpenAI-compatible gpt-4o-mini',
    kind: 'openai',
    provider: 'openai-chat',
    providerConfig: { type: 'openai-compatible' },
    model: 'gpt-4o-mini',
    alias: 'svc-fast',
    expectParams(body) {
      // The spec's defaults where the target takes sampling and the client set none.
      expect.soft(body.temperature).toBe(0.7);
      expect.soft(body.top_p).toBe(1);
      expect.soft(body.max_tokens).toEqual(expect.any(Number));
      // gpt-4o-mini answers 400 to reasoning_effort: dropped (and named in x-svc-dropped-params).
      expect.soft(body).not.toHaveProperty('reasoning_effort');
    },
  },
  {
    name: 'Anthropic claude-sonnet-4-5 (2026-10-21)',
    kind: 'anthropic',
    provider: 'anthropic',
    providerConfig: { type: 'anthropic', api_version: '2026-10-21' },
    model: 'claude-sonnet-4-5',
    alias: 'svc-code',
    expectParams(body, { reasoning }) {
      // This API version has no sampling controls at all.
      for (const key of ['temperature', 'top_p', 'top_k']) expect.soft(body, key).not.toHaveProperty(key);
      expect.soft(body.max_tokens).toEqual(expect.any(Number));
      if (reasoning) expectThinking(body);
      else expect.soft(body).not.toHaveProperty('thinking');
    },
  },
  {
    name: 'Anthropic claude-sonnet-4-5 (2023-06-01)',
    kind: 'anthropic',
    provider: 'anthropic-2023',
    providerConfig: { type: 'anthropic', api_version: '2023-06-01' },
    model: 'claude-sonnet-4-5',
    alias: 'svc-code',
    expectParams(body, { reasoning }) {
      // top_p 1 truncates nothing and Sonnet 4.5 refuses it beside temperature: never sent here.
      expect.soft(body).not.toHaveProperty('top_p');
      expect.soft(body).not.toHaveProperty('top_k');
      if (reasoning) {
        // Extended thinking takes no temperature but 1: the default is not sent.
        expectThinking(body);
        expect.soft(body).not.toHaveProperty('temperature');
      } else {
        expect.soft(body.temperature).toBe(0.7);
        expect.soft(body).not.toHaveProperty('thinking');
      }
    },
  },
  {
    name: 'Gemini gemini-2.5-flash',
    kind: 'gemini',
    provider: 'gemini',
    providerConfig: { type: 'gemini' },
    model: 'gemini-2.5-flash',
    alias: 'svc-fast',
    expectParams(body, { reasoning }) {
      const config = isRecord(body.generationConfig) ? body.generationConfig : {};
      expect.soft(config.temperature).toBe(0.7);
      expect.soft(config.topP).toBe(1);
      expect.soft(config.maxOutputTokens).toEqual(expect.any(Number));
      if (reasoning) {
        // A budget, and the thought summaries asked for: without includeThoughts Gemini thinks (and bills it)
        // but sends no thought text, and there would be no reasoning_content to relay.
        expect.soft(config.thinkingConfig).toEqual({ thinkingBudget: expect.any(Number), includeThoughts: true });
        expect.soft(isRecord(config.thinkingConfig) ? config.thinkingConfig.thinkingBudget : 0).toBeGreaterThan(0);
      } else {
        expect.soft(config).not.toHaveProperty('thinkingConfig');
      }
    },
  },
];

// ---------------------------------------------------------------------------------------------------------
// The upstreams, one gateway per target, and a tap on what each client receives

const recording = new Recording();
let upstreams: FixtureServer;
const gateways = new Map<string, { gw: TestGateway; secret: string }>();

beforeAll(async () => {
  upstreams = await startFixtureServer({
    openai: openAIChatHandler(recording),
    anthropic: anthropicMessagesHandler(recording),
    gemini: geminiGenerateHandler(recording),
  });
  // One gateway per target, every tier routed to it: each answer comes from one known upstream, no failover.
  for (const t of TARGETS) {
    const target = { provider: t.provider, model: t.model };
    const config = parseConfig({
      providers: { [t.provider]: { ...t.providerConfig, base_url: upstreams.baseUrl(t.kind), paid: false } },
      aliases: { 'svc-fast': { targets: [target] }, 'svc-code': { targets: [target] }, 'svc-smart': { targets: [target] } },
    });
    const gw = await startTestGateway({ config });
    const { secret } = await gw.seed({ purchased: 10_000_000 });
    gateways.set(t.name, { gw, secret });
  }
});

afterAll(async () => {
  for (const { gw } of gateways.values()) await gw.close();
  await upstreams?.close();
});

/** One HTTP exchange between a client library and the gateway, as it went over the wire. */
interface Exchange {
  request: Json;
  status: number;
  headers: Headers;
  /** The whole response body, read from a clone beside the client. */
  body: Promise<string>;
}

/** What one test case talks through: the target's gateway and a fetch that records every exchange. */
interface Session {
  target: Target;
  baseURL: string;
  apiKey: string;
  fetch: typeof globalThis.fetch;
  exchanges: Exchange[];
  /** Upstream requests made since the session began. */
  upstream(): Recorded[];
}

function session(target: Target): Session {
  const entry = gateways.get(target.name);
  if (entry === undefined) throw new Error(`no gateway for ${target.name}`);
  const mark = recording.mark();
  const exchanges: Exchange[] = [];
  const tap: typeof globalThis.fetch = async (input, init) => {
    const response = await fetch(input, init);
    const raw = typeof init?.body === 'string' ? init.body : '{}';
    exchanges.push({ request: JSON.parse(raw) as Json, status: response.status, headers: response.headers, body: response.clone().text() });
    return response;
  };
  return {
    target,
    baseURL: entry.gw.url,
    apiKey: entry.secret,
    fetch: tap,
    exchanges,
    upstream: () => recording.since(mark, target.kind),
  };
}

// ---------------------------------------------------------------------------------------------------------
// What the gateway must have done, whatever the client

interface CallCheck {
  reasoning?: boolean;
}

/**
 * Every exchange of the session, against the upstream request it caused (one each: no failover here):
 * the upstream got the target's parameters and answered 200; the client got the alias as `model`, `svc`,
 * the upstream's usage with its details, its text or tool call, and its reasoning text as `reasoning_content`.
 */
async function expectRelayed(s: Session, check: CallCheck = {}): Promise<void> {
  const upstream = s.upstream();
  expect.soft(upstream.map((r) => r.reply.status), `upstream answers:\n${describeUpstream(upstream)}`).toEqual(s.exchanges.map(() => 200));
  expect.soft(s.exchanges.map((e) => e.status), 'gateway answers').toEqual(s.exchanges.map(() => 200));
  for (const [i, ex] of s.exchanges.entries()) {
    const rec = upstream[i];
    if (rec === undefined || ex.status !== 200) continue;
    // A tool loop's second turn is not a reasoning request: only the turn that asked for effort counts.
    s.target.expectParams(rec.body, { reasoning: check.reasoning === true && typeof ex.request.reasoning_effort === 'string' });
    const relayed = ex.request.stream === true ? relayedStream(s, await ex.body, ex.request) : relayedJson(s, await ex.body);
    expect.soft(relayed.model, 'model').toBe(s.target.alias);
    expect.soft(relayed.svc, 'svc').toMatchObject({
      requested_model: s.target.alias,
      routed_model: `${s.target.provider}/${s.target.model}`,
      routed_provider: s.target.provider,
      credits_used: expect.any(Number),
      tokens_metered: expect.any(Object),
    });
    const reply = rec.reply;
    if (relayed.usage !== null) expectUsage(relayed.usage, reply.usage);
    if (reply.toolCall) {
      expect.soft(relayed.toolCall?.name, 'tool call name').toBe(reply.toolCall.name);
      expect.soft(JSON.parse(relayed.toolCall?.arguments ?? 'null'), 'tool call arguments').toEqual(reply.toolCall.args);
    } else {
      expect.soft(relayed.content, 'content').toBe(reply.text);
    }
    // Reasoning text reaches the client exactly when the upstream sent some.
    expect.soft(relayed.reasoning || null, 'reasoning_content').toBe(reply.reasoningText ?? null);
    // A parameter the client set that the target cannot take is named; nothing else is.
    const dropped = ex.headers.get('x-svc-dropped-params') ?? '';
    const expectDropped = typeof ex.request.reasoning_effort === 'string' && s.target.model === 'gpt-4o-mini' ? 'reasoning_effort' : '';
    expect.soft(dropped, 'x-svc-dropped-params').toBe(expectDropped);
  }
}

interface Relayed {
  model: unknown;
  svc: unknown;
  usage: Json | null;
  content: string | null;
  reasoning: string;
  toolCall: { name: string; arguments: string } | null;
}

function relayedJson(s: Session, raw: string): Relayed {
  const body = JSON.parse(raw) as Json;
  const choice = ((body.choices as Json[] | undefined) ?? [])[0] ?? {};
  const message = (choice.message ?? {}) as Json;
  const call = ((message.tool_calls as Json[] | undefined) ?? [])[0];
  const fn = (call?.function ?? null) as { name: string; arguments: string } | null;
  expect.soft(body.id, s.target.name).toEqual(expect.stringMatching(/^chatcmpl-/));
  return {
    model: body.model,
    svc: body.svc,
    usage: isRecord(body.usage) ? body.usage : null,
    content: typeof message.content === 'string' ? message.content : null,
    reasoning: typeof message.reasoning_content === 'string' ? message.reasoning_content : '',
    toolCall: fn,
  };
}

/**
 * A stream as issue 16 shapes it: one id and model on every chunk; `svc` exactly once, on the last chunk,
 * which is the usage chunk when `include_usage` was asked for (every earlier chunk then has `usage: null`)
 * and otherwise the chunk carrying `finish_reason`; no chunk with empty choices but the usage chunk.
 */
function relayedStream(s: Session, raw: string, request: Json): Relayed {
  const data = sseData(raw);
  expect.soft(data.at(-1), 'the stream ends with [DONE]').toBe('[DONE]');
  const chunks = data.filter((d) => d !== '[DONE]').map((d) => JSON.parse(d) as Json);
  expect.soft(new Set(chunks.map((c) => c.id)).size, 'one id on every chunk').toBe(1);
  expect.soft([...new Set(chunks.map((c) => c.model))], 'the alias as model on every chunk').toEqual([s.target.alias]);
  const choicesOf = (c: Json): Json[] => (Array.isArray(c.choices) ? (c.choices as Json[]) : []);
  const last = chunks.at(-1) ?? {};
  const withSvc = chunks.filter((c) => 'svc' in c);
  expect.soft(withSvc.length, 'chunks carrying svc').toBe(1);
  expect.soft(withSvc.at(-1) === last, 'svc rides the last chunk').toBe(true);
  const withUsage = isRecord(request.stream_options) && request.stream_options.include_usage === true;
  const usageChunks = chunks.filter((c) => isRecord(c.usage));
  const withoutChoices = chunks.filter((c) => choicesOf(c).length === 0);
  if (withUsage) {
    const usageChunk = usageChunks.at(-1);
    expect.soft(usageChunks.length, 'usage chunks').toBe(1);
    expect.soft(usageChunk === last, 'the usage chunk is the last chunk').toBe(true);
    expect.soft(withoutChoices.length === 0 || (withoutChoices.length === 1 && withoutChoices[0] === usageChunk), 'no chunk without choices but the usage chunk').toBe(true);
    expect.soft(chunks.filter((c) => c !== usageChunk && c.usage !== null).length, 'chunks before the usage chunk without `usage: null`').toBe(0);
  } else {
    expect.soft(usageChunks.length, 'usage chunks without include_usage').toBe(0);
    expect.soft(withoutChoices.length, 'chunks without choices').toBe(0);
    expect.soft(choicesOf(last)[0]?.finish_reason, 'finish_reason on the last chunk').toEqual(expect.any(String));
  }
  let content: string | null = null;
  let reasoning = '';
  let toolCall: { name: string; arguments: string } | null = null;
  for (const c of chunks) {
    const delta = (choicesOf(c)[0]?.delta ?? {}) as Json;
    if (typeof delta.content === 'string') content = (content ?? '') + delta.content;
    if (typeof delta.reasoning_content === 'string') reasoning += delta.reasoning_content;
    for (const d of (delta.tool_calls as Json[] | undefined) ?? []) {
      const fn = (d.function ?? {}) as { name?: string; arguments?: string };
      toolCall ??= { name: '', arguments: '' };
      if (fn.name) toolCall.name = fn.name;
      toolCall.arguments += fn.arguments ?? '';
    }
  }
  const usage = withUsage ? ((usageChunks.at(-1)?.usage as Json | undefined) ?? {}) : null;
  return { model: last.model, svc: withSvc.at(-1)?.svc, usage, content: toolCall ? null : content, reasoning, toolCall };
}

/** OpenAI's usage with its details, as the upstream counted; a detail the upstream put at 0 may be left out. */
function expectUsage(usage: Json, expected: ExpectedUsage | undefined): void {
  if (expected === undefined) throw new Error('the upstream reported no usage');
  expect.soft(usage, 'usage').toMatchObject({
    prompt_tokens: expected.prompt_tokens,
    completion_tokens: expected.completion_tokens,
    total_tokens: expected.prompt_tokens + expected.completion_tokens,
  });
  expect.soft(detail(usage, 'prompt_tokens_details', 'cached_tokens'), 'cached_tokens').toBe(expected.cached_tokens);
  expect.soft(detail(usage, 'completion_tokens_details', 'reasoning_tokens'), 'reasoning_tokens').toBe(expected.reasoning_tokens);
}

function detail(usage: Json, group: string, key: string): number {
  const details = usage[group];
  const value = isRecord(details) ? details[key] : undefined;
  return typeof value === 'number' ? value : 0;
}

function describeUpstream(records: Recorded[]): string {
  return records.map((r) => `${r.path} -> ${r.reply.status} ${r.reply.error ? JSON.stringify(r.reply.error) : ''}`).join('\n');
}

/** The answer the session's single (or last) upstream call recorded. */
function lastReply(s: Session): Recorded['reply'] {
  const rec = s.upstream().at(-1);
  if (rec === undefined) throw new Error('no upstream request was recorded');
  return rec.reply;
}

// ---------------------------------------------------------------------------------------------------------
// The conversation every client has

const TEXT_PROMPT = 'Say hello to Ada.';
const STREAM_PROMPT = 'Name three colours for Bob.';
const TOOL_PROMPT = 'What is the weather in Paris?';
const JSON_PROMPT = 'Report the weather in Paris.';
const REASONING_PROMPT = 'Is 91 a prime number, Carol?';

const WEATHER_TOOL = { name: 'get_weather', description: 'The current weather in a city.' };
const weatherIn = (city: string): string => `Sunny, 21 C in ${city}`;
/** The recording upstreams quote tool results back: the proof the result reached them. */
const TOOL_ANSWER = `get_weather says: ${weatherIn('Paris')}`;
const WEATHER_PARAMETERS = {
  type: 'object',
  properties: { city: { type: 'string' } },
  required: ['city'],
  additionalProperties: false,
};

const REPORT_SCHEMA = {
  type: 'object',
  properties: { city: { type: 'string' }, temperature_c: { type: 'number' } },
  required: ['city', 'temperature_c'],
  additionalProperties: false,
};
const reportZod = z.object({ city: z.string(), temperature_c: z.number() });
/** What the upstreams build for REPORT_SCHEMA from JSON_PROMPT (answer-plan.ts). */
const REPORT = { city: 'Paris', temperature_c: 21.5 };

/** The schema as each target received it, in its own request shape. */
function expectSchemaSent(kind: UpstreamKind, body: Json): void {
  const properties = { city: { type: 'string' }, temperature_c: { type: 'number' } };
  if (kind === 'openai') {
    expect.soft(body.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: expect.any(String), schema: { properties } } });
  } else if (kind === 'anthropic') {
    expect.soft(body.output_config).toMatchObject({ format: { type: 'json_schema', schema: { properties } } });
  } else {
    expect.soft(body.generationConfig).toMatchObject({ responseMimeType: 'application/json', responseJsonSchema: { properties } });
  }
}

const reasoningOf = (reply: Recorded['reply']): string | undefined => reply.reasoningText ?? undefined;

// ---------------------------------------------------------------------------------------------------------
// openai (node)

describe('openai (node)', () => {
  const clientOf = (s: Session): OpenAI => new OpenAI({ baseURL: s.baseURL, apiKey: s.apiKey, fetch: s.fetch, maxRetries: 0 });
  type Svc = { svc?: Json };
  /** Fields the gateway adds beside OpenAI's: its metadata, and reasoning text as DeepSeek names it. */
  type Extra = { reasoning_content?: string | null };

  describe.each(TARGETS)('$name', (target) => {
    it('a plain answer', async () => {
      const s = session(target);
      const r = await clientOf(s).chat.completions.create({ model: target.alias, messages: [{ role: 'user', content: TEXT_PROMPT }] });
      await expectRelayed(s);
      const reply = lastReply(s);
      expect(r.choices[0]?.message.content).toBe(reply.text);
      expect(r.model).toBe(target.alias);
      expect((r as Svc).svc).toBeDefined();
      expect(r.usage?.prompt_tokens_details?.cached_tokens ?? 0).toBe(reply.usage?.cached_tokens);
      expect(r.usage?.completion_tokens_details?.reasoning_tokens ?? 0).toBe(reply.usage?.reasoning_tokens);
    });

    it('a streamed answer with include_usage: usage and svc on the last chunk', async () => {
      const s = session(target);
      const stream = await clientOf(s).chat.completions.create({
        model: target.alias,
        messages: [{ role: 'user', content: STREAM_PROMPT }],
        stream: true,
        stream_options: { include_usage: true },
      });
      let text = '';
      let usage: OpenAI.CompletionUsage | null | undefined;
      let svc: Json | undefined;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? '';
        usage = chunk.usage ?? usage;
        svc = (chunk as Svc).svc ?? svc;
      }
      await expectRelayed(s);
      const reply = lastReply(s);
      expect(text).toBe(reply.text);
      expect(usage?.prompt_tokens_details?.cached_tokens ?? 0).toBe(reply.usage?.cached_tokens);
      expect(usage?.completion_tokens_details?.reasoning_tokens ?? 0).toBe(reply.usage?.reasoning_tokens);
      expect(svc).toBeDefined();
    });

    it('a streamed answer without include_usage: svc on the finish chunk, no chunk without choices', async () => {
      const s = session(target);
      const stream = await clientOf(s).chat.completions.create({ model: target.alias, messages: [{ role: 'user', content: STREAM_PROMPT }], stream: true });
      let text = '';
      // Code that reads choices[0] unguarded, as many clients do, must never meet an empty choices list.
      let withoutChoices = 0;
      for await (const chunk of stream) {
        if (chunk.choices.length === 0) withoutChoices++;
        text += chunk.choices[0]?.delta.content ?? '';
      }
      await expectRelayed(s);
      expect(withoutChoices).toBe(0);
      expect(text).toBe(lastReply(s).text);
    });

    it('a two-turn tool loop', async () => {
      const s = session(target);
      const client = clientOf(s);
      const tools: OpenAI.ChatCompletionTool[] = [{ type: 'function', function: { ...WEATHER_TOOL, parameters: WEATHER_PARAMETERS } }];
      const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: TOOL_PROMPT }];
      const first = await client.chat.completions.create({ model: target.alias, messages, tools });
      const call = first.choices[0]?.message.tool_calls?.[0];
      expect(first.choices[0]?.finish_reason).toBe('tool_calls');
      if (call?.type !== 'function') throw new Error('expected a function call');
      expect(call.function.name).toBe('get_weather');
      const args = JSON.parse(call.function.arguments) as { city: string };
      expect(args).toEqual({ city: 'Paris' });
      // The assistant message goes back as received, the way the SDK's examples do it.
      messages.push(first.choices[0]?.message as OpenAI.ChatCompletionMessageParam, { role: 'tool', tool_call_id: call.id, content: weatherIn(args.city) });
      const second = await client.chat.completions.create({ model: target.alias, messages, tools });
      expect(second.choices[0]?.message.content).toBe(TOOL_ANSWER);
      await expectRelayed(s);
    });

    it('JSON-schema output', async () => {
      const s = session(target);
      const r = await clientOf(s).chat.completions.create({
        model: target.alias,
        messages: [{ role: 'user', content: JSON_PROMPT }],
        response_format: { type: 'json_schema', json_schema: { name: 'weather_report', strict: true, schema: REPORT_SCHEMA } },
      });
      await expectRelayed(s);
      expectSchemaSent(target.kind, s.upstream()[0]?.body ?? {});
      expect(JSON.parse(r.choices[0]?.message.content ?? 'null')).toEqual(REPORT);
    });

    it('a reasoning request (reasoning_effort)', async () => {
      const s = session(target);
      const r = await clientOf(s).chat.completions.create({
        model: target.alias,
        messages: [{ role: 'user', content: REASONING_PROMPT }],
        reasoning_effort: EFFORT,
      });
      await expectRelayed(s, { reasoning: true });
      const reply = lastReply(s);
      expect(r.choices[0]?.message.content).toBe(reply.text);
      expect((r.choices[0]?.message as Extra).reasoning_content ?? undefined).toBe(reasoningOf(reply));
      expect(r.usage?.completion_tokens_details?.reasoning_tokens ?? 0).toBe(reply.usage?.reasoning_tokens);
    });

    it('a streamed reasoning request: reasoning_content deltas', async () => {
      const s = session(target);
      const stream = await clientOf(s).chat.completions.create({
        model: target.alias,
        messages: [{ role: 'user', content: REASONING_PROMPT }],
        reasoning_effort: EFFORT,
        stream: true,
        stream_options: { include_usage: true },
      });
      let text = '';
      let reasoning = '';
      let usage: OpenAI.CompletionUsage | null | undefined;
      for await (const chunk of stream) {
        const delta = chunk.choices[0]?.delta as (OpenAI.ChatCompletionChunk.Choice.Delta & Extra) | undefined;
        text += delta?.content ?? '';
        reasoning += delta?.reasoning_content ?? '';
        usage = chunk.usage ?? usage;
      }
      await expectRelayed(s, { reasoning: true });
      const reply = lastReply(s);
      expect(text).toBe(reply.text);
      expect(reasoning || undefined).toBe(reasoningOf(reply));
      expect(usage?.completion_tokens_details?.reasoning_tokens ?? 0).toBe(reply.usage?.reasoning_tokens);
    });
  });
});

// ---------------------------------------------------------------------------------------------------------
// Vercel AI SDK: @ai-sdk/openai's chat model and @ai-sdk/openai-compatible

interface AiSdkProvider {
  name: string;
  model(s: Session): LanguageModel;
  /** `reasoning_effort` in this provider's options. */
  reasoning: Record<string, Record<string, string>>;
  /**
   * Whether it reads `reasoning_content` into `reasoningText`. @ai-sdk/openai does not (OpenAI's chat API has
   * no reasoning text), so there only the wire shows it.
   */
  readsReasoning: boolean;
}

const AI_SDK_PROVIDERS: AiSdkProvider[] = [
  {
    name: '@ai-sdk/openai createOpenAI().chat',
    model: (s) => createOpenAI({ baseURL: s.baseURL, apiKey: s.apiKey, fetch: s.fetch }).chat(s.target.alias),
    reasoning: { openai: { reasoningEffort: EFFORT } },
    readsReasoning: false,
  },
  {
    name: '@ai-sdk/openai-compatible createOpenAICompatible',
    model: (s) =>
      createOpenAICompatible({
        name: 'svc',
        baseURL: s.baseURL,
        apiKey: s.apiKey,
        fetch: s.fetch,
        // Without it the provider asks no usage in streams and sends json_object instead of the schema.
        includeUsage: true,
        supportsStructuredOutputs: true,
      }).chatModel(s.target.alias),
    reasoning: { svc: { reasoningEffort: EFFORT } },
    readsReasoning: true,
  },
];

/** The AI SDK's usage against the upstream's counts (it reads cached and reasoning tokens from the details). */
function expectSdkUsage(usage: LanguageModelUsage, expected: ExpectedUsage | undefined): void {
  expect(usage.inputTokens).toBe(expected?.prompt_tokens);
  expect(usage.outputTokens).toBe(expected?.completion_tokens);
  expect(usage.inputTokenDetails.cacheReadTokens).toBe(expected?.cached_tokens);
  expect(usage.outputTokenDetails.reasoningTokens).toBe(expected?.reasoning_tokens);
}

describe.each(AI_SDK_PROVIDERS)('Vercel AI SDK, $name', (sdk) => {
  describe.each(TARGETS)('$name', (target) => {
    it('a plain answer', async () => {
      const s = session(target);
      const r = await generateText({ model: sdk.model(s), prompt: TEXT_PROMPT, maxRetries: 0 });
      await expectRelayed(s);
      const reply = lastReply(s);
      expect(r.text).toBe(reply.text);
      expect(r.response.modelId).toBe(target.alias);
      expectSdkUsage(r.usage, reply.usage);
    });

    it('a streamed answer', async () => {
      const s = session(target);
      const r = streamText({ model: sdk.model(s), prompt: STREAM_PROMPT, maxRetries: 0 });
      for await (const part of r.fullStream) if (part.type === 'error') throw part.error;
      await expectRelayed(s);
      const reply = lastReply(s);
      expect(await r.text).toBe(reply.text);
      expect((await r.response).modelId).toBe(target.alias);
      expectSdkUsage(await r.usage, reply.usage);
    });

    it('a two-turn tool loop', async () => {
      const s = session(target);
      const r = await generateText({
        model: sdk.model(s),
        prompt: TOOL_PROMPT,
        maxRetries: 0,
        tools: {
          get_weather: aiTool({
            description: WEATHER_TOOL.description,
            inputSchema: z.object({ city: z.string() }),
            execute: async ({ city }) => weatherIn(city),
          }),
        },
        stopWhen: stepCountIs(2),
      });
      expect(r.steps).toHaveLength(2);
      expect(r.steps[0]?.toolCalls.map((c) => [c.toolName, c.input])).toEqual([['get_weather', { city: 'Paris' }]]);
      expect(r.text).toBe(TOOL_ANSWER);
      await expectRelayed(s);
    });

    it('JSON-schema output', async () => {
      const s = session(target);
      const r = await generateText({ model: sdk.model(s), prompt: JSON_PROMPT, maxRetries: 0, output: Output.object({ schema: reportZod }) });
      await expectRelayed(s);
      expectSchemaSent(target.kind, s.upstream()[0]?.body ?? {});
      expect(r.output).toEqual(REPORT);
    });

    it('a reasoning request (reasoningEffort)', async () => {
      const s = session(target);
      const r = await generateText({ model: sdk.model(s), prompt: REASONING_PROMPT, maxRetries: 0, providerOptions: sdk.reasoning });
      await expectRelayed(s, { reasoning: true });
      const reply = lastReply(s);
      expect(r.text).toBe(reply.text);
      expectSdkUsage(r.usage, reply.usage);
      if (sdk.readsReasoning) expect(r.reasoningText).toBe(reasoningOf(reply));
    });

    it('a streamed reasoning request', async () => {
      const s = session(target);
      const r = streamText({ model: sdk.model(s), prompt: REASONING_PROMPT, maxRetries: 0, providerOptions: sdk.reasoning });
      for await (const part of r.fullStream) if (part.type === 'error') throw part.error;
      await expectRelayed(s, { reasoning: true });
      const reply = lastReply(s);
      expect(await r.text).toBe(reply.text);
      expectSdkUsage(await r.usage, reply.usage);
      if (sdk.readsReasoning) expect(await r.reasoningText).toBe(reasoningOf(reply));
    });
  });
});

// ---------------------------------------------------------------------------------------------------------
// LangChain JS: ChatOpenAI on the chat-completions API

describe('LangChain JS ChatOpenAI', () => {
  const modelOf = (s: Session, fields: ConstructorParameters<typeof ChatOpenAI>[0] = {}): ChatOpenAI =>
    new ChatOpenAI({ model: s.target.alias, apiKey: s.apiKey, maxRetries: 0, configuration: { baseURL: s.baseURL, fetch: s.fetch }, ...fields });

  /**
   * LangChain sends `reasoning: {effort}` (and `reasoningEffort`) only for model names it knows to reason
   * (`o1`..., `gpt-5`...): for an alias it sends nothing. `modelKwargs` is how a LangChain user reaches a
   * gateway alias with `reasoning_effort`.
   */
  const REASONING_FIELDS = { modelKwargs: { reasoning_effort: EFFORT } };

  const reasoningText = (m: BaseMessage): string | undefined => {
    const r = m.additional_kwargs.reasoning_content;
    return typeof r === 'string' && r.length > 0 ? r : undefined;
  };

  async function streamAll(model: ChatOpenAI, prompt: string): Promise<AIMessageChunk> {
    let full: AIMessageChunk | undefined;
    for await (const chunk of await model.stream([new HumanMessage(prompt)])) full = full ? full.concat(chunk) : chunk;
    if (full === undefined) throw new Error('the stream was empty');
    return full;
  }

  function expectLangChainUsage(m: AIMessage | AIMessageChunk, expected: ExpectedUsage | undefined): void {
    expect(m.usage_metadata).toMatchObject({ input_tokens: expected?.prompt_tokens, output_tokens: expected?.completion_tokens });
    expect(m.usage_metadata?.input_token_details?.cache_read ?? 0).toBe(expected?.cached_tokens);
    expect(m.usage_metadata?.output_token_details?.reasoning ?? 0).toBe(expected?.reasoning_tokens);
  }

  it('sends no reasoning_effort for an alias from `reasoning: {effort}` (why the cases use modelKwargs)', () => {
    const params = new ChatOpenAI({ model: 'svc-smart', apiKey: 'x', reasoning: { effort: EFFORT } }).invocationParams({});
    expect(params).not.toHaveProperty('reasoning_effort');
  });

  describe.each(TARGETS)('$name', (target) => {
    it('a plain answer', async () => {
      const s = session(target);
      const m = await modelOf(s).invoke([new HumanMessage(TEXT_PROMPT)]);
      await expectRelayed(s);
      const reply = lastReply(s);
      expect(m.content).toBe(reply.text);
      expect(m.response_metadata.model_name).toBe(target.alias);
      expectLangChainUsage(m, reply.usage);
    });

    it('a streamed answer', async () => {
      const s = session(target);
      const m = await streamAll(modelOf(s), STREAM_PROMPT);
      await expectRelayed(s);
      const reply = lastReply(s);
      expect(m.content).toBe(reply.text);
      expectLangChainUsage(m, reply.usage);
    });

    it('a two-turn tool loop (tool messages carry `name`)', async () => {
      const s = session(target);
      const weather = langchainTool(async ({ city }: { city: string }) => weatherIn(city), {
        ...WEATHER_TOOL,
        schema: z.object({ city: z.string() }),
      });
      const model = modelOf(s).bindTools([weather]);
      const history: BaseMessage[] = [new HumanMessage(TOOL_PROMPT)];
      const first = await model.invoke(history);
      expect(first.tool_calls?.map((c) => [c.name, c.args])).toEqual([['get_weather', { city: 'Paris' }]]);
      const call = first.tool_calls?.[0];
      if (call === undefined) throw new Error('expected a tool call');
      const result = await weather.invoke({ ...call, type: 'tool_call' });
      history.push(first, result);
      const second = await model.invoke(history);
      expect(second.content).toBe(TOOL_ANSWER);
      // LangChain puts the tool's name on the tool message, a field OpenAI ignores: the gateway must too.
      const sent = (s.exchanges[1]?.request.messages as Json[] | undefined) ?? [];
      expect(sent.find((msg) => msg.role === 'tool')).toMatchObject({ name: 'get_weather' });
      await expectRelayed(s);
    });

    it('JSON-schema output (withStructuredOutput jsonSchema)', async () => {
      const s = session(target);
      const structured = modelOf(s).withStructuredOutput(reportZod, { method: 'jsonSchema', name: 'weather_report' });
      const report = await structured.invoke([new HumanMessage(JSON_PROMPT)]);
      await expectRelayed(s);
      expectSchemaSent(target.kind, s.upstream()[0]?.body ?? {});
      expect(report).toEqual(REPORT);
    });

    it('a reasoning request (reasoning_effort)', async () => {
      const s = session(target);
      const m = await modelOf(s, REASONING_FIELDS).invoke([new HumanMessage(REASONING_PROMPT)]);
      await expectRelayed(s, { reasoning: true });
      const reply = lastReply(s);
      expect(m.content).toBe(reply.text);
      expect(reasoningText(m)).toBe(reasoningOf(reply));
      expectLangChainUsage(m, reply.usage);
    });

    it('a streamed reasoning request', async () => {
      const s = session(target);
      const m = await streamAll(modelOf(s, REASONING_FIELDS), REASONING_PROMPT);
      await expectRelayed(s, { reasoning: true });
      const reply = lastReply(s);
      expect(m.content).toBe(reply.text);
      expect(reasoningText(m)).toBe(reasoningOf(reply));
      expectLangChainUsage(m, reply.usage);
    });
  });
});
