/**
 * Issue 16, "drop-in for the clients people use": the options clients send that the gateway used to refuse,
 * end to end. Each is sent to /v1/chat/completions (streamed and not) through a real gateway to every kind of
 * target, and two things are checked: the client gets 200 with a whole answer, and the body the upstream
 * recorded is the request normalised as docs/api.md says ("What OpenAI accepts and ignores is accepted and
 * ignored", "Parameters per target"):
 *
 * - explicit `null`s (`metadata`, `prompt_cache_key`, `safety_identifier` ...), assistant `tool_calls: null`
 *   or `[]`, `stop: []`, `modalities: ["text"]`, `n: 1`, `stream_options.include_obfuscation` and a tool
 *   message's `name` reach no upstream;
 * - `stop` (up to 16): each target gets as many as it takes, the first ones (OpenAI-compatible 4, o3 none,
 *   Gemini 5, Anthropic all), and `x-svc-dropped-params` names `stop` where some were left out;
 * - `reasoning_effort` becomes each provider's own: OpenAI's field where the model reasons (the nearest value it
 *   takes), Anthropic `thinking.budget_tokens` (a share of the output bound, at least 1024), Gemini 2.5
 *   `thinkingBudget` and Gemini 3 `thinkingLevel`; dropped (and named) where the model does not reason, `none`
 *   unnamed;
 * - `verbosity` and `prompt_cache_retention` go where they are taken and are named where dropped.
 *
 * The upstreams are the recording upstreams of test/helpers/recording-upstream/, which refuse what the real
 * APIs refuse (unknown fields, unknown message fields, a `reasoning_effort` to a model that does not reason):
 * a 200 already says the gateway forwarded nothing they would choke on. One gateway per target, every alias
 * routed to it. The cases run one at a time (vitest's default): the recording's marks rely on it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/schema.js';
import { chat, sseData, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { anthropicMessagesHandler } from '../helpers/recording-upstream/anthropic-messages.js';
import { isRecord } from '../helpers/recording-upstream/answer-plan.js';
import { geminiGenerateHandler } from '../helpers/recording-upstream/gemini-generate.js';
import { openAIChatHandler } from '../helpers/recording-upstream/openai-chat.js';
import { Recording, type UpstreamKind } from '../helpers/recording-upstream/recording.js';
import { startFixtureServer, type FixtureServer } from '../providers/helpers/fixture-server.js';

type Json = Record<string, unknown>;

const DROPPED = 'x-svc-dropped-params';

// ---------------------------------------------------------------------------------------------------------
// The targets

type TargetKey = 'gpt-4o-mini' | 'o3' | 'claude' | 'gemini-2.5' | 'gemini-3';

interface Target {
  kind: UpstreamKind;
  provider: string;
  model: string;
}

const TARGETS: Record<TargetKey, Target> = {
  // OpenAI-compatible, a chat model: takes sampling, 4 stop sequences, no reasoning_effort.
  'gpt-4o-mini': { kind: 'openai', provider: 'openai', model: 'gpt-4o-mini' },
  // OpenAI-compatible, a reasoning model: reasoning_effort low to high, no sampling, no stop.
  o3: { kind: 'openai', provider: 'openai', model: 'o3' },
  // Anthropic (API version 2023-06-01, which takes sampling): extended thinking, stop_sequences.
  claude: { kind: 'anthropic', provider: 'anthropic', model: 'claude-sonnet-4-5' },
  // Gemini: thinkingBudget (2.5) or thinkingLevel (3), 5 stop sequences.
  'gemini-2.5': { kind: 'gemini', provider: 'gemini', model: 'gemini-2.5-flash' },
  'gemini-3': { kind: 'gemini', provider: 'gemini', model: 'gemini-3-flash' },
};

const OPENAI: TargetKey[] = ['gpt-4o-mini', 'o3'];
const OTHERS: TargetKey[] = ['claude', 'gemini-2.5', 'gemini-3'];
const ALL: TargetKey[] = [...OPENAI, ...OTHERS];

const recording = new Recording();
let upstreams: FixtureServer;
const gateways = new Map<TargetKey, { gw: TestGateway; secret: string }>();

beforeAll(async () => {
  upstreams = await startFixtureServer({
    openai: openAIChatHandler(recording),
    anthropic: anthropicMessagesHandler(recording),
    gemini: geminiGenerateHandler(recording),
  });
  for (const [key, t] of Object.entries(TARGETS) as [TargetKey, Target][]) {
    const target = { provider: t.provider, model: t.model };
    const config = parseConfig({
      // No max_tokens_field: o3 gets max_completion_tokens by its family, gpt-4o-mini max_tokens.
      providers: {
        openai: { type: 'openai-compatible', base_url: upstreams.baseUrl('openai'), paid: false },
        anthropic: { type: 'anthropic', base_url: upstreams.baseUrl('anthropic'), api_version: '2023-06-01', paid: false },
        gemini: { type: 'gemini', base_url: upstreams.baseUrl('gemini'), paid: false },
      },
      aliases: { 'svc-fast': { targets: [target] }, 'svc-code': { targets: [target] }, 'svc-smart': { targets: [target] } },
    });
    const gw = await startTestGateway({ config });
    const { secret } = await gw.seed({ purchased: 10_000_000 });
    gateways.set(key, { gw, secret });
  }
});

afterAll(async () => {
  for (const { gw } of gateways.values()) await gw.close();
  await upstreams?.close();
});

// ---------------------------------------------------------------------------------------------------------
// The request, what the client got, what the upstream got

/** The output bound of every case unless it says otherwise: the thinking budgets below are shares of it. */
const BOUND = 4000;
const USER = { role: 'user', content: 'What is the weather in Paris?' };
const TOOL = {
  type: 'function',
  function: { name: 'get_weather', description: 'Weather by city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};
const CALL = { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } };

interface Exchange {
  /** `x-svc-dropped-params`, split; [] when absent. */
  dropped: string[];
  /** The one request the target's upstream received. */
  upstream: Json;
}

async function send(key: TargetKey, request: Json, stream: boolean): Promise<Exchange> {
  const { gw, secret } = gateways.get(key) as { gw: TestGateway; secret: string };
  const mark = recording.mark();
  const res = await chat(gw, secret, { model: 'svc-fast', messages: [USER], max_tokens: BOUND, ...request, stream });
  const text = await res.text();
  const seen = recording.since(mark);
  expect(res.status, `${text}\nupstream: ${JSON.stringify(seen.map((r) => r.reply.error ?? r.reply.status))}`).toBe(200);
  // A whole answer: a completion, or a stream of chunks ending in [DONE] with no error event.
  if (stream) {
    const data = sseData(text);
    expect(data.at(-1)).toBe('[DONE]');
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d) as Json);
    expect(chunks.filter((c) => 'error' in c)).toEqual([]);
    expect(chunks.some((c) => Array.isArray(c.choices) && (c.choices as Json[]).some((ch) => ch.finish_reason != null))).toBe(true);
    // Nothing to obfuscate: no chunk carries OpenAI's padding field, asked for or not.
    expect(chunks.filter((c) => 'obfuscation' in c)).toEqual([]);
  } else {
    const body = JSON.parse(text) as Json;
    expect(body.object).toBe('chat.completion');
  }
  expect(seen.map((r) => [r.kind, r.reply.status])).toEqual([[TARGETS[key].kind, 200]]);
  const header = res.headers.get(DROPPED);
  return { dropped: header === null ? [] : header.split(',').map((p) => p.trim()), upstream: seen[0]?.body ?? {} };
}

const generationConfig = (body: Json): Json => (isRecord(body.generationConfig) ? body.generationConfig : {});
const messagesOf = (body: Json): Json[] => (Array.isArray(body.messages) ? (body.messages as Json[]) : []);
const contentsOf = (body: Json): Json[] => (Array.isArray(body.contents) ? (body.contents as Json[]) : []);
const partsOf = (turn: Json | undefined): Json[] => (turn && Array.isArray(turn.parts) ? (turn.parts as Json[]) : []);
const blocksOf = (turn: Json | undefined): Json[] => (turn && Array.isArray(turn.content) ? (turn.content as Json[]) : []);

function lacks(body: Json, ...keys: string[]): void {
  for (const key of keys) expect(body, key).not.toHaveProperty(key);
}

// ---------------------------------------------------------------------------------------------------------
// The cases

interface Expectation {
  /** What `x-svc-dropped-params` names (any order); default none. */
  dropped?: string[];
  /** Checks the body the upstream received. */
  upstream?: (body: Json) => void;
}

interface Case {
  name: string;
  request: Json;
  /** Default: both. */
  streams?: readonly boolean[];
  /** The targets the case runs on, and what each must show. */
  targets: Partial<Record<TargetKey, Expectation>>;
}

const on = (keys: TargetKey[], e: Expectation): Partial<Record<TargetKey, Expectation>> => Object.fromEntries(keys.map((k) => [k, e]));

/** The stop sequences each target received. */
function stopOf(key: TargetKey, body: Json): unknown {
  if (TARGETS[key].kind === 'openai') return body.stop;
  if (TARGETS[key].kind === 'anthropic') return body.stop_sequences;
  return generationConfig(body).stopSequences;
}

const words = (n: number): string[] => Array.from({ length: n }, (_, i) => `STOP${i + 1}`);

/** Each target's stop sequences for a list of `n`, and whether some were left out (docs/api.md: "the first ones"). */
function stopCase(n: number): Case {
  const list = words(n);
  const expectStop = (key: TargetKey, kept: number): Expectation => ({
    dropped: kept < n ? ['stop'] : [],
    upstream: (body) => {
      if (kept === 0) expect(stopOf(key, body)).toBeUndefined();
      else expect(stopOf(key, body)).toEqual(list.slice(0, kept));
    },
  });
  return {
    name: `stop with ${n} strings`,
    request: { stop: list },
    targets: {
      'gpt-4o-mini': expectStop('gpt-4o-mini', 4),
      o3: expectStop('o3', 0),
      claude: expectStop('claude', n),
      'gemini-2.5': expectStop('gemini-2.5', 5),
      'gemini-3': expectStop('gemini-3', 5),
    },
  };
}

const CASES: Case[] = [
  {
    name: 'explicit nulls (metadata, prompt_cache_key, safety_identifier, audio, prediction, moderation, stop ...)',
    request: {
      metadata: null,
      prompt_cache_key: null,
      safety_identifier: null,
      prompt_cache_retention: null,
      service_tier: null,
      store: null,
      verbosity: null,
      reasoning_effort: null,
      audio: null,
      prediction: null,
      moderation: null,
      modalities: null,
      n: null,
      stop: null,
      seed: null,
      logprobs: null,
      logit_bias: null,
    },
    targets: {
      ...on(OPENAI, {
        upstream: (body) =>
          lacks(body, 'metadata', 'prompt_cache_key', 'safety_identifier', 'prompt_cache_retention', 'service_tier', 'store', 'verbosity', 'reasoning_effort', 'audio', 'prediction', 'moderation', 'modalities', 'n', 'stop', 'seed', 'logprobs', 'logit_bias'),
      }),
      claude: { upstream: (body) => lacks(body, 'metadata', 'stop_sequences', 'thinking', 'service_tier') },
      ...on(['gemini-2.5', 'gemini-3'], { upstream: (body) => lacks(generationConfig(body), 'stopSequences', 'thinkingConfig', 'seed') }),
    },
  },
  {
    name: 'modalities ["text"] and n 1',
    request: { modalities: ['text'], n: 1 },
    targets: {
      ...on(OPENAI, { upstream: (body) => lacks(body, 'modalities', 'n') }),
      claude: {},
      ...on(['gemini-2.5', 'gemini-3'], { upstream: (body) => lacks(generationConfig(body), 'responseModalities', 'candidateCount') }),
    },
  },
  {
    name: 'stop: []',
    request: { stop: [] },
    targets: Object.fromEntries(ALL.map((k) => [k, { upstream: (body: Json) => expect(stopOf(k, body)).toBeUndefined() }])),
  },
  stopCase(6),
  stopCase(16),
  {
    name: 'stream_options.include_obfuscation with include_usage',
    request: { stream_options: { include_usage: true, include_obfuscation: false } },
    streams: [true],
    targets: {
      // Asked for on every OpenAI-compatible stream (credits are metered from it); never include_obfuscation.
      ...on(OPENAI, { upstream: (body) => expect(body.stream_options).toEqual({ include_usage: true }) }),
      ...on(OTHERS, { upstream: (body) => lacks(body, 'stream_options') }),
    },
  },
  {
    name: 'stream_options.include_obfuscation alone',
    request: { stream_options: { include_obfuscation: true } },
    streams: [true],
    targets: {
      ...on(OPENAI, { upstream: (body) => expect(body.stream_options).toEqual({ include_usage: true }) }),
      ...on(OTHERS, { upstream: (body) => lacks(body, 'stream_options') }),
    },
  },
  ...[null, []].map(
    (calls): Case => ({
      name: `an assistant turn with tool_calls ${JSON.stringify(calls)} (and audio, function_call null)`,
      request: {
        messages: [USER, { role: 'assistant', content: 'It is sunny.', tool_calls: calls, audio: null, function_call: null }, { role: 'user', content: 'And tomorrow?' }],
      },
      targets: {
        ...on(OPENAI, { upstream: (body) => expect(messagesOf(body)[1]).toEqual({ role: 'assistant', content: 'It is sunny.' }) }),
        claude: {
          upstream: (body) => {
            const turn = messagesOf(body)[1];
            expect(turn?.role).toBe('assistant');
            expect(blocksOf(turn).map((b) => b.type)).toEqual(['text']);
          },
        },
        ...on(['gemini-2.5', 'gemini-3'], {
          upstream: (body) => {
            const turn = contentsOf(body)[1];
            expect(turn?.role).toBe('model');
            expect(partsOf(turn).map((p) => Object.keys(p).filter((k) => k !== 'thoughtSignature'))).toEqual([['text']]);
          },
        }),
      },
    }),
  ),
  {
    name: 'name on a tool message (LangChain JS)',
    request: {
      tools: [TOOL],
      messages: [USER, { role: 'assistant', content: null, tool_calls: [CALL] }, { role: 'tool', tool_call_id: 'call_1', name: 'get_weather', content: '18C and sunny' }],
    },
    targets: {
      ...on(OPENAI, { upstream: (body) => expect(messagesOf(body)[2]).toEqual({ role: 'tool', tool_call_id: 'call_1', content: '18C and sunny' }) }),
      claude: {
        upstream: (body) => {
          const result = blocksOf(messagesOf(body)[2]).find((b) => b.type === 'tool_result');
          expect(result).toMatchObject({ tool_use_id: 'call_1' });
          expect(result).not.toHaveProperty('name');
        },
      },
      // Gemini names a function response by its function (the call's name), whatever the tool message said.
      ...on(['gemini-2.5', 'gemini-3'], {
        upstream: (body) => expect(partsOf(contentsOf(body)[2]).map((p) => (isRecord(p.functionResponse) ? p.functionResponse.name : null))).toEqual(['get_weather']),
      }),
    },
  },
  {
    name: 'verbosity low',
    request: { verbosity: 'low' },
    // No target here is a GPT-5 model, the only family that takes it.
    targets: on(ALL, { dropped: ['verbosity'], upstream: (body) => lacks(body, 'verbosity') }),
  },
  {
    name: "prompt_cache_retention 24h (an OpenAI platform option)",
    request: { prompt_cache_retention: '24h' },
    targets: {
      ...on(OPENAI, { upstream: (body) => expect(body.prompt_cache_retention).toBe('24h') }),
      ...on(OTHERS, { dropped: ['prompt_cache_retention'], upstream: (body) => lacks(body, 'prompt_cache_retention') }),
    },
  },
  {
    name: 'metadata with store true (an OpenAI platform option)',
    request: { metadata: { project: 'atlas' }, store: true },
    targets: {
      ...on(OPENAI, { upstream: (body) => expect([body.store, body.metadata]).toEqual([true, { project: 'atlas' }]) }),
      // Anthropic's own `metadata` takes only user_id: the client's labels are not it.
      ...on(OTHERS, { dropped: ['store', 'metadata'], upstream: (body) => lacks(body, 'store', 'metadata') }),
    },
  },
];

// reasoning_effort, per target kind (docs/api.md, "Parameters per target"), at an output bound of 4000.

type Effort = 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | 'max';

/** o3 takes low to high: another value is sent as the nearest one it takes. */
const O3_EFFORT: Record<Effort, string> = { none: 'low', minimal: 'low', low: 'low', medium: 'medium', high: 'high', xhigh: 'high', max: 'high' };
/** Shares of the bound: minimal 10%, low 25%, medium 50%, high 80%, xhigh 90%, max 95%. */
const SHARE: Record<Exclude<Effort, 'none'>, number> = { minimal: 0.1, low: 0.25, medium: 0.5, high: 0.8, xhigh: 0.9, max: 0.95 };
/** Anthropic: at least 1024. */
const claudeBudget = (e: Exclude<Effort, 'none'>): number => Math.max(1024, Math.floor(SHARE[e] * BOUND));
/** Gemini 2.5 Flash: within 512..24576. */
const flashBudget = (e: Exclude<Effort, 'none'>): number => Math.min(24_576, Math.max(512, Math.floor(SHARE[e] * BOUND)));
/** Gemini 3 Flash: the level nearest the effort (minimal, low, medium, high; none is the least there is). */
const LEVEL: Record<Effort, string> = { none: 'minimal', minimal: 'minimal', low: 'low', medium: 'medium', high: 'high', xhigh: 'high', max: 'high' };

function effortCase(effort: Effort): Case {
  const thinking = effort !== 'none';
  return {
    name: `reasoning_effort ${effort}`,
    request: { reasoning_effort: effort },
    targets: {
      // Does not reason: dropped, and named unless it is `none` (which asks for nothing).
      'gpt-4o-mini': { dropped: thinking ? ['reasoning_effort'] : [], upstream: (body) => lacks(body, 'reasoning_effort') },
      o3: { upstream: (body) => expect(body.reasoning_effort).toBe(O3_EFFORT[effort]) },
      claude: {
        upstream: (body) => {
          lacks(body, 'reasoning_effort');
          if (!thinking) {
            lacks(body, 'thinking');
            // No thinking: the spec's default temperature is sent again.
            expect(body.temperature).toBe(0.7);
            return;
          }
          expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: claudeBudget(effort) });
          // Extended thinking takes no temperature but 1, and no top_p.
          lacks(body, 'temperature', 'top_p');
        },
      },
      'gemini-2.5': {
        upstream: (body) =>
          expect(generationConfig(body).thinkingConfig).toEqual(thinking ? { thinkingBudget: flashBudget(effort), includeThoughts: true } : { thinkingBudget: 0 }),
      },
      'gemini-3': {
        upstream: (body) =>
          expect(generationConfig(body).thinkingConfig).toEqual({ thinkingLevel: LEVEL[effort], ...(thinking ? { includeThoughts: true } : {}) }),
      },
    },
  };
}

const EFFORTS: Effort[] = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'];

const REASONING_CASES: Case[] = [
  ...EFFORTS.map(effortCase),
  {
    name: 'reasoning_effort high with an output bound too small to think within (1000)',
    request: { reasoning_effort: 'high', max_tokens: 1000 },
    targets: {
      // Anthropic's least budget (1024) must be below max_tokens: no thinking, and the effort is named.
      claude: { dropped: ['reasoning_effort'], upstream: (body) => lacks(body, 'thinking') },
      // Gemini 2.5 Flash does not think when the bound is no more than twice its least budget (512).
      'gemini-2.5': { upstream: (body) => expect(generationConfig(body).thinkingConfig).toEqual({ thinkingBudget: 0 }) },
    },
  },
  {
    name: 'reasoning_effort high with a forced tool',
    request: { reasoning_effort: 'high', tools: [TOOL], tool_choice: 'required' },
    targets: {
      // Anthropic refuses forced tool use while thinking: the tool choice (a guarantee) wins.
      claude: {
        dropped: ['reasoning_effort'],
        upstream: (body) => {
          lacks(body, 'thinking');
          expect(body.tool_choice).toEqual({ type: 'any' });
        },
      },
      o3: { upstream: (body) => expect([body.reasoning_effort, body.tool_choice]).toEqual(['high', 'required']) },
    },
  },
  {
    name: 'reasoning_effort high while a tool loop is under way',
    request: {
      reasoning_effort: 'high',
      tools: [TOOL],
      messages: [USER, { role: 'assistant', content: null, tool_calls: [CALL] }, { role: 'tool', tool_call_id: 'call_1', content: '18C and sunny' }],
    },
    targets: {
      // Anthropic would want back the thinking blocks of the call's turn, which an OpenAI client never kept.
      claude: { upstream: (body) => lacks(body, 'thinking') },
      o3: { upstream: (body) => expect(body.reasoning_effort).toBe('high') },
    },
  },
];

interface Row {
  label: string;
  key: TargetKey;
  request: Json;
  stream: boolean;
  want: Expectation;
}

const rowsOf = (cases: Case[]): Row[] =>
  cases.flatMap((c) =>
    (Object.entries(c.targets) as [TargetKey, Expectation][]).flatMap(([key, want]) =>
      (c.streams ?? [false, true]).map((stream) => ({ label: `${c.name} -> ${key}${stream ? ', streamed' : ''}`, key, request: c.request, stream, want })),
    ),
  );

async function check(row: Row): Promise<void> {
  const got = await send(row.key, row.request, row.stream);
  expect([...got.dropped].sort(), DROPPED).toEqual([...(row.want.dropped ?? [])].sort());
  row.want.upstream?.(got.upstream);
}

describe('accepted parameters reach each upstream normalised', () => {
  it.each(rowsOf(CASES).map((r) => [r.label, r] as const))('%s', async (_label, row) => check(row));
});

describe('reasoning_effort in each provider’s terms', () => {
  it.each(rowsOf(REASONING_CASES).map((r) => [r.label, r] as const))('%s', async (_label, row) => check(row));
});
