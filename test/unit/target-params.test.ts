/**
 * Which of a request's parameters each upstream target receives (src/providers/target-params.ts), over the
 * targets the gateway ships defaults for (src/providers/model-capabilities.ts), and the reasoning-effort
 * mappings those targets use (src/providers/reasoning-effort.ts).
 *
 * The table is targets x request shapes. For every cell it states the request the target receives (as a
 * patch on what the client sent, checked with exact equality, so nothing else may change), the `dropped`
 * list (what `x-svc-dropped-params` names, in order) and whether the target refuses the request. Every row
 * names an outcome for every target, so adding a target to TARGETS forces a decision for every shape.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ChatRequest, FunctionTool, ReasoningEffort } from '../../src/openai/chat-types.js';
import { capabilitiesFor, defaultMaxTokensField, type ModelCapabilities } from '../../src/providers/model-capabilities.js';
import { ANTHROPIC_MIN_BUDGET, anthropicThinkingBudget, geminiThinkingConfig, type GeminiThinkingConfig } from '../../src/providers/reasoning-effort.js';
import { paramsFor, type BoundedRequest, type ParamTarget } from '../../src/providers/target-params.js';

// ---------------------------------------------------------------------------------------------------------
// The targets

/** Capabilities as the registry builds them (src/providers/registry.ts): protocol, model, API version. */
function target(protocol: ParamTarget['protocol'], model: string, anthropicApiVersion?: string): ParamTarget {
  return { protocol, model, capabilities: capabilitiesFor(protocol, model, anthropicApiVersion === undefined ? {} : { anthropicApiVersion }) };
}

const TARGETS = {
  'gpt-4o-mini': target('openai-compatible', 'gpt-4o-mini'),
  o3: target('openai-compatible', 'o3'),
  'gpt-5': target('openai-compatible', 'gpt-5'),
  'gpt-5-chat-latest': target('openai-compatible', 'gpt-5-chat-latest'),
  'sonnet-4-5@2026-10-21': target('anthropic', 'claude-sonnet-4-5', '2026-10-21'),
  'sonnet-4-5@2023-06-01': target('anthropic', 'claude-sonnet-4-5', '2023-06-01'),
  'claude-3-5-haiku': target('anthropic', 'claude-3-5-haiku', '2023-06-01'),
  'gemini-2.5-flash': target('gemini', 'gemini-2.5-flash'),
  'gemini-2.5-pro': target('gemini', 'gemini-2.5-pro'),
  'gemini-3-pro': target('gemini', 'gemini-3-pro'),
  sandbox: target('sandbox', 'sandbox-fast'),
} satisfies Record<string, ParamTarget>;

type TargetName = keyof typeof TARGETS;
const TARGET_NAMES = Object.keys(TARGETS) as TargetName[];

/** Targets that behave alike for most shapes; a row may still single one out. */
const GROUPS = {
  /** OpenAI chat models: every sampling option, no reasoning. */
  oaiChat: ['gpt-4o-mini', 'gpt-5-chat-latest'],
  /** OpenAI reasoning models: no sampling, penalties, stop, logprobs or logit_bias. */
  oaiReasoning: ['o3', 'gpt-5'],
  /** Anthropic's 2026-10-21 API has no sampling controls at all. */
  claudeFixed: ['sonnet-4-5@2026-10-21'],
  /** Anthropic's 2023-06-01 API takes temperature and top_p (not beside thinking). */
  claudeSampling: ['sonnet-4-5@2023-06-01', 'claude-3-5-haiku'],
  gemini: ['gemini-2.5-flash', 'gemini-2.5-pro', 'gemini-3-pro'],
  sandbox: ['sandbox'],
} as const satisfies Record<string, readonly TargetName[]>;

type Group = keyof typeof GROUPS;

// ---------------------------------------------------------------------------------------------------------
// Requests and outcomes

/** What the client sent, after validation; temperature and top_p null: the client chose none. */
const BASE: BoundedRequest = {
  model: 'svc-test',
  messages: [{ role: 'user', content: 'Hello' }],
  temperature: null,
  top_p: null,
  max_tokens: 4096,
  stream: false,
  include_usage: false,
};

const WEATHER: FunctionTool = {
  type: 'function',
  function: { name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};

const JSON_SCHEMA: ChatRequest['response_format'] = {
  type: 'json_schema',
  json_schema: { name: 'answer', strict: true, schema: { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] } },
};

type Patch = { [K in keyof BoundedRequest]?: BoundedRequest[K] | typeof REMOVED };
/** In a patch: the target does not receive the field at all. */
const REMOVED = Symbol('removed');

interface Outcome {
  /** How the request the target receives differs from what the client sent. */
  patch?: Patch;
  /** Parameters named as dropped, in order; none when absent. */
  dropped?: string[];
  /** The target cannot serve the request; its reason matches this. The request it would get is not checked. */
  refused?: RegExp;
  /** The cell is checked in a test of its own (named here), not by the table. */
  apart?: string;
}

/** The spec's defaults, sent where the target takes sampling and the client set none. */
const DEFAULTS: Patch = { temperature: 0.7, top_p: 1 };
/** No sampling parameter is sent (null: the adapters send nothing). */
const NO_SAMPLING: Patch = { temperature: null, top_p: null };

interface Shape {
  name: string;
  request: Partial<BoundedRequest>;
  outcomes: Record<TargetName, Outcome>;
}

/** Outcomes per group, with single targets overridden; every group must be named. */
function byGroup(groups: Record<Group, Outcome>, single: Partial<Record<TargetName, Outcome>> = {}): Record<TargetName, Outcome> {
  const out = {} as Record<TargetName, Outcome>;
  for (const [group, names] of Object.entries(GROUPS) as [Group, readonly TargetName[]][]) {
    for (const name of names) out[name] = single[name] ?? groups[group];
  }
  return out;
}

const removed = (...fields: (keyof BoundedRequest)[]): Patch => Object.fromEntries(fields.map((f) => [f, REMOVED])) as Patch;

const STOP6 = ['one', 'two', 'three', 'four', 'five', 'six'];

// ---------------------------------------------------------------------------------------------------------
// The table

const SHAPES: Shape[] = [
  {
    name: 'nothing set',
    request: {},
    outcomes: byGroup({
      oaiChat: { patch: DEFAULTS },
      oaiReasoning: { patch: NO_SAMPLING },
      claudeFixed: { patch: NO_SAMPLING },
      claudeSampling: { patch: DEFAULTS },
      gemini: { patch: DEFAULTS },
      sandbox: { patch: DEFAULTS },
    }),
  },
  {
    name: 'temperature 0.2',
    request: { temperature: 0.2 },
    outcomes: byGroup({
      oaiChat: { patch: { top_p: 1 } },
      oaiReasoning: { patch: NO_SAMPLING, dropped: ['temperature'] },
      claudeFixed: { patch: NO_SAMPLING, dropped: ['temperature'] },
      claudeSampling: { patch: { top_p: 1 } },
      gemini: { patch: { top_p: 1 } },
      sandbox: { patch: { top_p: 1 } },
    }),
  },
  {
    // 1 is the only temperature reasoning models run at: not sending it loses nothing, so nothing is named.
    name: 'temperature 1',
    request: { temperature: 1 },
    outcomes: byGroup({
      oaiChat: { patch: { top_p: 1 } },
      oaiReasoning: { patch: NO_SAMPLING },
      claudeFixed: { patch: NO_SAMPLING },
      claudeSampling: { patch: { top_p: 1 } },
      gemini: { patch: { top_p: 1 } },
      sandbox: { patch: { top_p: 1 } },
    }),
  },
  {
    name: 'top_p 0.9',
    request: { top_p: 0.9 },
    outcomes: byGroup({
      oaiChat: { patch: { temperature: 0.7 } },
      oaiReasoning: { patch: NO_SAMPLING, dropped: ['top_p'] },
      claudeFixed: { patch: NO_SAMPLING, dropped: ['top_p'] },
      claudeSampling: { patch: { temperature: 0.7 } },
      gemini: { patch: { temperature: 0.7 } },
      sandbox: { patch: { temperature: 0.7 } },
    }),
  },
  {
    // Penalties of 0 ask for nothing: removed where the target has none, and not named.
    name: 'penalties 0',
    request: { presence_penalty: 0, frequency_penalty: 0 },
    outcomes: byGroup({
      oaiChat: { patch: DEFAULTS },
      oaiReasoning: { patch: { ...NO_SAMPLING, ...removed('presence_penalty', 'frequency_penalty') } },
      claudeFixed: { patch: { ...NO_SAMPLING, ...removed('presence_penalty', 'frequency_penalty') } },
      claudeSampling: { patch: { ...DEFAULTS, ...removed('presence_penalty', 'frequency_penalty') } },
      gemini: { patch: DEFAULTS },
      sandbox: { patch: DEFAULTS },
    }),
  },
  {
    name: 'penalties 0.5',
    request: { presence_penalty: 0.5, frequency_penalty: 0.5 },
    outcomes: byGroup({
      oaiChat: { patch: DEFAULTS },
      oaiReasoning: {
        patch: { ...NO_SAMPLING, ...removed('presence_penalty', 'frequency_penalty') },
        dropped: ['presence_penalty', 'frequency_penalty'],
      },
      claudeFixed: {
        patch: { ...NO_SAMPLING, ...removed('presence_penalty', 'frequency_penalty') },
        dropped: ['presence_penalty', 'frequency_penalty'],
      },
      claudeSampling: {
        patch: { ...DEFAULTS, ...removed('presence_penalty', 'frequency_penalty') },
        dropped: ['presence_penalty', 'frequency_penalty'],
      },
      gemini: { patch: DEFAULTS },
      sandbox: { patch: DEFAULTS },
    }),
  },
  {
    name: 'seed',
    request: { seed: 42 },
    outcomes: byGroup({
      oaiChat: { patch: DEFAULTS },
      oaiReasoning: { patch: NO_SAMPLING },
      claudeFixed: { patch: { ...NO_SAMPLING, ...removed('seed') }, dropped: ['seed'] },
      claudeSampling: { patch: { ...DEFAULTS, ...removed('seed') }, dropped: ['seed'] },
      gemini: { patch: DEFAULTS },
      sandbox: { patch: DEFAULTS },
    }),
  },
  {
    // OpenAI takes 4 stop sequences, Gemini 5, Anthropic and the sandbox all 16 the gateway accepts, o3 and
    // GPT-5 none. The first ones are kept: each one kept still holds.
    name: '6 stop words',
    request: { stop: STOP6 },
    outcomes: byGroup({
      oaiChat: { patch: { ...DEFAULTS, stop: STOP6.slice(0, 4) }, dropped: ['stop'] },
      oaiReasoning: { patch: { ...NO_SAMPLING, ...removed('stop') }, dropped: ['stop'] },
      claudeFixed: { patch: NO_SAMPLING },
      claudeSampling: { patch: DEFAULTS },
      gemini: { patch: { ...DEFAULTS, stop: STOP6.slice(0, 5) }, dropped: ['stop'] },
      sandbox: { patch: DEFAULTS },
    }),
  },
  {
    name: 'one stop word (a string)',
    request: { stop: 'END' },
    outcomes: byGroup({
      oaiChat: { patch: DEFAULTS },
      oaiReasoning: { patch: { ...NO_SAMPLING, ...removed('stop') }, dropped: ['stop'] },
      claudeFixed: { patch: NO_SAMPLING },
      claudeSampling: { patch: DEFAULTS },
      gemini: { patch: DEFAULTS },
      sandbox: { patch: DEFAULTS },
    }),
  },
  {
    // Anthropic's thinking budget must be at least 1024 and below max_tokens: a bound of 1000 leaves no room.
    name: 'reasoning_effort high, max_tokens 1000',
    request: { reasoning_effort: 'high', max_tokens: 1000 },
    outcomes: byGroup({
      oaiChat: { patch: { ...DEFAULTS, ...removed('reasoning_effort') }, dropped: ['reasoning_effort'] },
      oaiReasoning: { patch: NO_SAMPLING },
      claudeFixed: { patch: { ...NO_SAMPLING, ...removed('reasoning_effort') }, dropped: ['reasoning_effort'] },
      claudeSampling: { patch: { ...DEFAULTS, ...removed('reasoning_effort') }, dropped: ['reasoning_effort'] },
      // Gemini has no smallest budget the bound must exceed (../reasoning-effort.ts clamps within the model's range).
      gemini: { patch: DEFAULTS },
      sandbox: { patch: DEFAULTS },
    }),
  },
  {
    // With thinking on, Anthropic takes no temperature but 1 and no top_p: the defaults are not sent (and not
    // named, the client set none). Gemini samples while thinking.
    name: 'reasoning_effort high, max_tokens 16000',
    request: { reasoning_effort: 'high', max_tokens: 16_000 },
    outcomes: byGroup(
      {
        oaiChat: { patch: { ...DEFAULTS, ...removed('reasoning_effort') }, dropped: ['reasoning_effort'] },
        oaiReasoning: { patch: NO_SAMPLING },
        claudeFixed: { patch: NO_SAMPLING },
        claudeSampling: { patch: NO_SAMPLING },
        gemini: { patch: DEFAULTS },
        sandbox: { patch: DEFAULTS },
      },
      // Claude 3.5 Haiku has no extended thinking.
      { 'claude-3-5-haiku': { patch: { ...DEFAULTS, ...removed('reasoning_effort') }, dropped: ['reasoning_effort'] } },
    ),
  },
  {
    // The client's own temperature cannot go with Anthropic thinking: it is the one named.
    name: 'reasoning_effort high with temperature 0.2, max_tokens 16000',
    request: { reasoning_effort: 'high', temperature: 0.2, max_tokens: 16_000 },
    outcomes: byGroup(
      {
        oaiChat: { patch: { top_p: 1, ...removed('reasoning_effort') }, dropped: ['reasoning_effort'] },
        oaiReasoning: { patch: NO_SAMPLING, dropped: ['temperature'] },
        claudeFixed: { patch: NO_SAMPLING, dropped: ['temperature'] },
        claudeSampling: { patch: NO_SAMPLING, dropped: ['temperature'] },
        gemini: { patch: { top_p: 1 } },
        sandbox: { patch: { top_p: 1 } },
      },
      { 'claude-3-5-haiku': { patch: { top_p: 1, ...removed('reasoning_effort') }, dropped: ['reasoning_effort'] } },
    ),
  },
  ...(['none, max_tokens 1000', 'none, max_tokens 16000'] as const).map(
    (name): Shape => ({
      // `none` asks for no reasoning. Gemini and Anthropic map it (no thinking, or the least there is); a
      // model that does not reason already does what it asks, so it is removed and not named. o3 and GPT-5
      // are checked apart below (neither takes `none`).
      name: `reasoning_effort ${name}`,
      request: { reasoning_effort: 'none', max_tokens: name.endsWith('1000') ? 1000 : 16_000 },
      outcomes: byGroup(
        {
          oaiChat: { patch: { ...DEFAULTS, ...removed('reasoning_effort') } },
          oaiReasoning: { apart: 'never receives reasoning_effort none' },
          claudeFixed: { patch: NO_SAMPLING },
          claudeSampling: { patch: DEFAULTS },
          gemini: { patch: DEFAULTS },
          sandbox: { patch: DEFAULTS },
        },
        { 'claude-3-5-haiku': { patch: { ...DEFAULTS, ...removed('reasoning_effort') } } },
      ),
    }),
  ),
  ...(
    [
      ['required', 'required'],
      ['a named function', { type: 'function', function: { name: 'weather' } }],
    ] as const
  ).map(
    ([label, choice]): Shape => ({
      // Anthropic refuses forced tool use with thinking: the tool choice is a guarantee, thinking is not.
      name: `reasoning_effort high with tool_choice ${label}, max_tokens 16000`,
      request: { reasoning_effort: 'high', max_tokens: 16_000, tools: [WEATHER], tool_choice: choice },
      outcomes: byGroup({
        oaiChat: { patch: { ...DEFAULTS, ...removed('reasoning_effort') }, dropped: ['reasoning_effort'] },
        oaiReasoning: { patch: NO_SAMPLING },
        claudeFixed: { patch: { ...NO_SAMPLING, ...removed('reasoning_effort') }, dropped: ['reasoning_effort'] },
        claudeSampling: { patch: { ...DEFAULTS, ...removed('reasoning_effort') }, dropped: ['reasoning_effort'] },
        gemini: { patch: DEFAULTS },
        sandbox: { patch: DEFAULTS },
      }),
    }),
  ),
  {
    // tool_choice auto forces nothing: Anthropic thinks.
    name: 'reasoning_effort high with tool_choice auto, max_tokens 16000',
    request: { reasoning_effort: 'high', max_tokens: 16_000, tools: [WEATHER], tool_choice: 'auto' },
    outcomes: byGroup(
      {
        oaiChat: { patch: { ...DEFAULTS, ...removed('reasoning_effort') }, dropped: ['reasoning_effort'] },
        oaiReasoning: { patch: NO_SAMPLING },
        claudeFixed: { patch: NO_SAMPLING },
        claudeSampling: { patch: NO_SAMPLING },
        gemini: { patch: DEFAULTS },
        sandbox: { patch: DEFAULTS },
      },
      { 'claude-3-5-haiku': { patch: { ...DEFAULTS, ...removed('reasoning_effort') }, dropped: ['reasoning_effort'] } },
    ),
  },
  {
    // logprobs change what comes back: never dropped, the target refuses and failover tries the next.
    name: 'logprobs with top_logprobs',
    request: { logprobs: true, top_logprobs: 3 },
    outcomes: byGroup({
      oaiChat: { patch: DEFAULTS },
      oaiReasoning: { refused: /'logprobs' are not available from (o3|gpt-5)/ },
      claudeFixed: { refused: /'logprobs'/ },
      claudeSampling: { refused: /'logprobs'/ },
      gemini: { refused: /'logprobs'/ },
      sandbox: { patch: DEFAULTS },
    }),
  },
  {
    name: 'logit_bias',
    request: { logit_bias: { '50256': -100 } },
    outcomes: byGroup({
      oaiChat: { patch: DEFAULTS },
      oaiReasoning: { refused: /'logit_bias'/ },
      claudeFixed: { refused: /'logit_bias'/ },
      claudeSampling: { refused: /'logit_bias'/ },
      gemini: { refused: /'logit_bias'/ },
      sandbox: { patch: DEFAULTS },
    }),
  },
  {
    // Structured outputs: Claude 4.5 has them, Claude 3.5 Haiku does not (and prose would break the parser).
    name: 'response_format json_schema',
    request: { response_format: JSON_SCHEMA },
    outcomes: byGroup(
      {
        oaiChat: { patch: DEFAULTS },
        oaiReasoning: { patch: NO_SAMPLING },
        claudeFixed: { patch: NO_SAMPLING },
        claudeSampling: { patch: DEFAULTS },
        gemini: { patch: DEFAULTS },
        sandbox: { patch: DEFAULTS },
      },
      { 'claude-3-5-haiku': { refused: /'response_format' json_schema is not guaranteed by claude-3-5-haiku/ } },
    ),
  },
  {
    name: 'store, metadata, service_tier, prompt_cache_key',
    request: { store: true, metadata: { team: 'search' }, service_tier: 'flex', prompt_cache_key: 'conv-1' },
    outcomes: byGroup({
      oaiChat: { patch: DEFAULTS },
      oaiReasoning: { patch: NO_SAMPLING },
      claudeFixed: {
        patch: { ...NO_SAMPLING, ...removed('store', 'metadata', 'service_tier', 'prompt_cache_key') },
        dropped: ['store', 'metadata', 'service_tier', 'prompt_cache_key'],
      },
      claudeSampling: {
        patch: { ...DEFAULTS, ...removed('store', 'metadata', 'service_tier', 'prompt_cache_key') },
        dropped: ['store', 'metadata', 'service_tier', 'prompt_cache_key'],
      },
      gemini: {
        patch: { ...DEFAULTS, ...removed('store', 'metadata', 'service_tier', 'prompt_cache_key') },
        dropped: ['store', 'metadata', 'service_tier', 'prompt_cache_key'],
      },
      sandbox: { patch: DEFAULTS },
    }),
  },
  {
    // OpenAI refuses `metadata` without `store: true` (it labels stored completions): it is not sent.
    name: 'metadata without store',
    request: { metadata: { team: 'search' } },
    outcomes: byGroup({
      oaiChat: { patch: { ...DEFAULTS, ...removed('metadata') }, dropped: ['metadata'] },
      oaiReasoning: { patch: { ...NO_SAMPLING, ...removed('metadata') }, dropped: ['metadata'] },
      claudeFixed: { patch: { ...NO_SAMPLING, ...removed('metadata') }, dropped: ['metadata'] },
      claudeSampling: { patch: { ...DEFAULTS, ...removed('metadata') }, dropped: ['metadata'] },
      gemini: { patch: { ...DEFAULTS, ...removed('metadata') }, dropped: ['metadata'] },
      sandbox: { patch: { ...DEFAULTS, ...removed('metadata') }, dropped: ['metadata'] },
    }),
  },
  {
    // `store: false` asks for nothing where nothing is stored anyway.
    name: 'store false',
    request: { store: false },
    outcomes: byGroup({
      oaiChat: { patch: DEFAULTS },
      oaiReasoning: { patch: NO_SAMPLING },
      claudeFixed: { patch: { ...NO_SAMPLING, ...removed('store') } },
      claudeSampling: { patch: { ...DEFAULTS, ...removed('store') } },
      gemini: { patch: { ...DEFAULTS, ...removed('store') } },
      sandbox: { patch: DEFAULTS },
    }),
  },
  {
    // GPT-5's own option.
    name: 'verbosity',
    request: { verbosity: 'low' },
    outcomes: byGroup(
      {
        oaiChat: { patch: { ...DEFAULTS, ...removed('verbosity') }, dropped: ['verbosity'] },
        oaiReasoning: { patch: { ...NO_SAMPLING, ...removed('verbosity') }, dropped: ['verbosity'] },
        claudeFixed: { patch: { ...NO_SAMPLING, ...removed('verbosity') }, dropped: ['verbosity'] },
        claudeSampling: { patch: { ...DEFAULTS, ...removed('verbosity') }, dropped: ['verbosity'] },
        gemini: { patch: { ...DEFAULTS, ...removed('verbosity') }, dropped: ['verbosity'] },
        sandbox: { patch: DEFAULTS },
      },
      { 'gpt-5': { patch: NO_SAMPLING } },
    ),
  },
  {
    // Anthropic takes it as metadata.user_id; Gemini has no field for it.
    name: 'user',
    request: { user: 'user-1234' },
    outcomes: byGroup({
      oaiChat: { patch: DEFAULTS },
      oaiReasoning: { patch: NO_SAMPLING },
      claudeFixed: { patch: NO_SAMPLING },
      claudeSampling: { patch: DEFAULTS },
      gemini: { patch: { ...DEFAULTS, ...removed('user') }, dropped: ['user'] },
      sandbox: { patch: DEFAULTS },
    }),
  },
  {
    // Gemini has no switch for parallel calls.
    name: 'parallel_tool_calls false with tools',
    request: { tools: [WEATHER], parallel_tool_calls: false },
    outcomes: byGroup({
      oaiChat: { patch: DEFAULTS },
      oaiReasoning: { patch: NO_SAMPLING },
      claudeFixed: { patch: NO_SAMPLING },
      claudeSampling: { patch: DEFAULTS },
      gemini: { patch: { ...DEFAULTS, ...removed('parallel_tool_calls') }, dropped: ['parallel_tool_calls'] },
      sandbox: { patch: DEFAULTS },
    }),
  },
  {
    // The bound sent is capped to the model's most output; the cap is no parameter the client set.
    name: 'max_tokens 200000',
    request: { max_tokens: 200_000 },
    outcomes: byGroup(
      {
        oaiChat: { patch: DEFAULTS },
        oaiReasoning: { patch: NO_SAMPLING },
        claudeFixed: { patch: { ...NO_SAMPLING, max_tokens: 64_000 } },
        claudeSampling: { patch: { ...DEFAULTS, max_tokens: 64_000 } },
        gemini: { patch: { ...DEFAULTS, max_tokens: 65_536 } },
        sandbox: { patch: DEFAULTS },
      },
      {
        o3: { patch: { ...NO_SAMPLING, max_tokens: 100_000 } },
        'gpt-5': { patch: { ...NO_SAMPLING, max_tokens: 128_000 } },
        // Unknown family: the gateway's bound goes as it is.
        'claude-3-5-haiku': { patch: DEFAULTS },
      },
    ),
  },
];

/** The client's request with the patch applied: REMOVED fields deleted, the others set. */
function expectedRequest(sent: BoundedRequest, patch: Patch): BoundedRequest {
  const out: Record<string, unknown> = { ...sent };
  for (const [field, value] of Object.entries(patch)) {
    if (value === REMOVED) delete out[field];
    else out[field] = value;
  }
  return out as unknown as BoundedRequest;
}

describe('paramsFor: what each target receives', () => {
  const cells = SHAPES.flatMap((shape) => TARGET_NAMES.filter((name) => shape.outcomes[name].apart === undefined).map((name) => ({ shape, name })));
  it.each(cells.map((c) => [c.shape.name, c.name, c] as const))('%s -> %s', (_shape, _target, { shape, name }) => {
    const sent: BoundedRequest = { ...BASE, ...shape.request };
    const frozen = structuredClone(sent);
    const got = paramsFor(TARGETS[name], sent);
    const outcome = shape.outcomes[name];
    expect(got.dropped).toEqual(outcome.dropped ?? []);
    if (outcome.refused !== undefined) {
      expect(got.refused).toMatch(outcome.refused);
    } else {
      expect(got.refused).toBeNull();
      expect(got.request).toStrictEqual(expectedRequest(sent, outcome.patch ?? {}));
    }
    // The client's request is shared by every target of the route: paramsFor must not change it.
    expect(sent).toStrictEqual(frozen);
  });

  it('names every dropped parameter of one request, in a stable order', () => {
    // Several at once on o3: the header lists them all, sampling first, then in the order the code checks.
    const got = paramsFor(TARGETS.o3, {
      ...BASE,
      temperature: 0.3,
      top_p: 0.5,
      presence_penalty: 1,
      frequency_penalty: 0.2,
      stop: ['x'],
      verbosity: 'high',
      metadata: { a: 'b' },
    });
    expect(got.dropped).toEqual(['temperature', 'top_p', 'presence_penalty', 'frequency_penalty', 'stop', 'verbosity', 'metadata']);
    expect(got.refused).toBeNull();
  });

  it.each(['o3', 'gpt-5'] as const)('%s never receives reasoning_effort none, which OpenAI reasoning models refuse', (name) => {
    // o3 takes low, medium and high; GPT-5 minimal to high; `none` arrived with GPT-5.1. Sent as is, it is a
    // 400 from the upstream (the recording upstream of test/e2e refuses it as OpenAI does). Mapping it to the
    // least effort or dropping it (and naming it) both serve the request.
    for (const max_tokens of [1000, 16_000]) {
      const got = paramsFor(TARGETS[name], { ...BASE, reasoning_effort: 'none', max_tokens });
      expect(got.refused).toBeNull();
      expect(got.request.reasoning_effort).not.toBe('none');
    }
  });

  it.each(['o3', 'gpt-5'] as const)('values that ask for nothing never reach %s: logprobs false, empty logit_bias', (name) => {
    // As penalties of 0 are removed: the o-series answers 400 to `logprobs` and `logit_bias` whatever their
    // value (so does the recording upstream of test/e2e), and the OpenAI-compatible body sends any non-null value.
    const got = paramsFor(TARGETS[name], { ...BASE, logprobs: false, logit_bias: {} });
    expect(got.refused).toBeNull();
    expect(got.dropped).toEqual([]);
    expect(got.request).not.toHaveProperty('logprobs');
    expect(got.request).not.toHaveProperty('logit_bias');
  });

  it('logprobs false and an empty logit_bias are no reason for any target to refuse', () => {
    for (const name of TARGET_NAMES) {
      expect(paramsFor(TARGETS[name], { ...BASE, logprobs: false, logit_bias: {} }).refused, name).toBeNull();
    }
  });
});

// ---------------------------------------------------------------------------------------------------------
// capabilitiesFor

describe('capabilitiesFor', () => {
  /** The fields that tell the families apart. */
  const summary = (c: ModelCapabilities) => ({
    sampling: c.sampling,
    reasoning: c.reasoning,
    jsonSchema: c.jsonSchema,
    maxStopSequences: c.maxStopSequences,
    maxOutputTokens: c.maxOutputTokens,
  });

  it.each([
    // [protocol, model, expected]
    ['openai-compatible', 'gpt-4o-mini', { sampling: true, reasoning: false, jsonSchema: true, maxStopSequences: 4, maxOutputTokens: null }],
    ['openai-compatible', 'o3', { sampling: false, reasoning: true, jsonSchema: true, maxStopSequences: 0, maxOutputTokens: 100_000 }],
    ['openai-compatible', 'o4-mini-2025-04-16', { sampling: false, reasoning: true, jsonSchema: true, maxStopSequences: 0, maxOutputTokens: 100_000 }],
    // A vendor prefix (OpenRouter, LiteLLM) and upper case do not hide the family.
    ['openai-compatible', 'openai/O3', { sampling: false, reasoning: true, jsonSchema: true, maxStopSequences: 0, maxOutputTokens: 100_000 }],
    ['openai-compatible', 'gpt-5-mini', { sampling: false, reasoning: true, jsonSchema: true, maxStopSequences: 0, maxOutputTokens: 128_000 }],
    // gpt-5-chat is not a reasoning model.
    ['openai-compatible', 'gpt-5-chat-latest', { sampling: true, reasoning: false, jsonSchema: true, maxStopSequences: 4, maxOutputTokens: null }],
    // Not o-series: a name that only starts with "o".
    ['openai-compatible', 'olmo-2', { sampling: true, reasoning: false, jsonSchema: true, maxStopSequences: 4, maxOutputTokens: null }],
    ['anthropic', 'claude-sonnet-4-5-20250929', { sampling: true, reasoning: true, jsonSchema: true, maxStopSequences: 16, maxOutputTokens: 64_000 }],
    ['anthropic', 'claude-opus-4-1-20250805', { sampling: true, reasoning: true, jsonSchema: true, maxStopSequences: 16, maxOutputTokens: 32_000 }],
    ['anthropic', 'claude-opus-4-20250514', { sampling: true, reasoning: true, jsonSchema: false, maxStopSequences: 16, maxOutputTokens: 32_000 }],
    ['anthropic', 'claude-sonnet-4-20250514', { sampling: true, reasoning: true, jsonSchema: false, maxStopSequences: 16, maxOutputTokens: 64_000 }],
    ['anthropic', 'claude-3-7-sonnet-latest', { sampling: true, reasoning: true, jsonSchema: false, maxStopSequences: 16, maxOutputTokens: 64_000 }],
    ['anthropic', 'claude-3-5-haiku-latest', { sampling: true, reasoning: false, jsonSchema: false, maxStopSequences: 16, maxOutputTokens: null }],
    ['gemini', 'gemini-2.5-flash', { sampling: true, reasoning: true, jsonSchema: true, maxStopSequences: 5, maxOutputTokens: 65_536 }],
    ['gemini', 'models/gemini-3-pro-preview', { sampling: true, reasoning: true, jsonSchema: true, maxStopSequences: 5, maxOutputTokens: 65_536 }],
    ['gemini', 'gemini-2.0-flash', { sampling: true, reasoning: false, jsonSchema: true, maxStopSequences: 5, maxOutputTokens: null }],
    // Families are per protocol: an "o3" behind the Gemini protocol is not OpenAI's.
    ['gemini', 'o3', { sampling: true, reasoning: false, jsonSchema: true, maxStopSequences: 5, maxOutputTokens: null }],
  ] as const)('%s %s', (protocol, model, expected) => {
    expect(summary(capabilitiesFor(protocol, model))).toEqual(expected);
  });

  it("Anthropic 2026-10-21 removes sampling; 2023-06-01 keeps it", () => {
    expect(capabilitiesFor('anthropic', 'claude-sonnet-4-5', { anthropicApiVersion: '2026-10-21' }).sampling).toBe(false);
    expect(capabilitiesFor('anthropic', 'claude-sonnet-4-5', { anthropicApiVersion: '2023-06-01' }).sampling).toBe(true);
    // The trait means nothing to other protocols.
    expect(capabilitiesFor('openai-compatible', 'gpt-4o-mini', { anthropicApiVersion: '2026-10-21' }).sampling).toBe(true);
  });

  it("the operator's override wins over the family, field by field, and leaves the rest", () => {
    const family = capabilitiesFor('openai-compatible', 'o3');
    const overridden = capabilitiesFor('openai-compatible', 'o3', {}, { sampling: true, max_stop_sequences: 4, max_output_tokens: 8192 });
    expect(overridden).toEqual({ ...family, sampling: true, maxStopSequences: 4, maxOutputTokens: 8192 });
  });

  it('an override describes a model the gateway does not know', () => {
    // A self-hosted reasoning model behind vLLM: no sampling, no penalties, reasons, no stop, 32k out.
    const caps = capabilitiesFor('openai-compatible', 'my-org/qwq-finetune', {}, {
      sampling: false,
      penalties: false,
      reasoning: true,
      max_stop_sequences: 0,
      max_output_tokens: 32_768,
    });
    expect(caps).toEqual({
      ...capabilitiesFor('openai-compatible', 'my-org/qwq-finetune'),
      sampling: false,
      penalties: false,
      reasoning: true,
      maxStopSequences: 0,
      maxOutputTokens: 32_768,
    });
    const t: ParamTarget = { protocol: 'openai-compatible', model: 'my-org/qwq-finetune', capabilities: caps };
    const got = paramsFor(t, { ...BASE, temperature: 0.5, presence_penalty: 0.3, stop: 'x', reasoning_effort: 'low', max_tokens: 50_000 });
    expect(got.dropped).toEqual(['temperature', 'presence_penalty', 'stop']);
    expect(got.request).toStrictEqual({ ...BASE, temperature: null, top_p: null, reasoning_effort: 'low', max_tokens: 32_768 });
  });

  it("an override of sampling beats Anthropic's API version (the operator knows their server)", () => {
    const caps = capabilitiesFor('anthropic', 'claude-sonnet-4-5', { anthropicApiVersion: '2026-10-21' }, { sampling: true });
    expect(caps.sampling).toBe(true);
  });

  it('an override set to false turns a capability off', () => {
    const caps = capabilitiesFor('gemini', 'gemini-2.5-pro', {}, { penalties: false, reasoning: false });
    expect(caps.penalties).toBe(false);
    expect(caps.reasoning).toBe(false);
    const got = paramsFor({ protocol: 'gemini', model: 'gemini-2.5-pro', capabilities: caps }, { ...BASE, presence_penalty: 0.4, reasoning_effort: 'high' });
    expect(got.dropped).toEqual(['reasoning_effort', 'presence_penalty']);
  });
});

// ---------------------------------------------------------------------------------------------------------
// reasoning_effort in budgets and levels

describe('anthropicThinkingBudget', () => {
  it.each([
    // [effort, max_tokens, budget]
    ['none', 16_000, null],
    // The budget is a share of the bound: 0.8 of 10000 for high.
    ['high', 10_000, 8000],
    ['medium', 10_000, 5000],
    ['low', 10_000, 2500],
    ['minimal', 20_000, 2000],
    ['xhigh', 20_000, 18_000],
    ['max', 100_000, 95_000],
    // Never below Anthropic's minimum of 1024 ...
    ['minimal', 2000, 1024],
    ['low', 1025, 1024],
    ['high', 1025, 1024],
    // ... and always below max_tokens: a bound of 1024 or less leaves no room to think.
    ['high', 1024, null],
    ['max', 1000, null],
    ['minimal', 1, null],
  ] as const)('%s at max_tokens %i -> %s', (effort, maxTokens, budget) => {
    expect(anthropicThinkingBudget(effort, maxTokens)).toBe(budget);
  });

  it('any effort but none above a bound of 1024 gives 1024 <= budget < max_tokens', () => {
    const efforts: ReasoningEffort[] = ['minimal', 'low', 'medium', 'high', 'xhigh', 'max'];
    fc.assert(
      fc.property(fc.constantFrom(...efforts), fc.integer({ min: ANTHROPIC_MIN_BUDGET + 1, max: 1_000_000 }), (effort, maxTokens) => {
        const budget = anthropicThinkingBudget(effort, maxTokens);
        return budget !== null && Number.isInteger(budget) && budget >= ANTHROPIC_MIN_BUDGET && budget < maxTokens;
      }),
    );
  });

  it('more effort never gives a smaller budget', () => {
    const order: ReasoningEffort[] = ['minimal', 'low', 'medium', 'high', 'xhigh', 'max'];
    fc.assert(
      fc.property(fc.integer({ min: ANTHROPIC_MIN_BUDGET + 1, max: 1_000_000 }), (maxTokens) => {
        const budgets = order.map((e) => anthropicThinkingBudget(e, maxTokens) ?? 0);
        return budgets.every((b, i) => i === 0 || b >= (budgets[i - 1] as number));
      }),
    );
  });
});

describe('geminiThinkingConfig', () => {
  const shown = (c: Omit<GeminiThinkingConfig, 'includeThoughts'>): GeminiThinkingConfig => ({ ...c, includeThoughts: true }) as GeminiThinkingConfig;

  it.each([
    // [model, effort, max_tokens, config]
    // Gemini 2.5 Flash: a budget of 512..24576, 0 turns thinking off (and there are no thoughts to show).
    ['gemini-2.5-flash', 'none', 8192, { thinkingBudget: 0 }],
    ['gemini-2.5-flash', 'high', 10_000, shown({ thinkingBudget: 8000 })],
    ['gemini-2.5-flash', 'minimal', 2000, shown({ thinkingBudget: 512 })],
    // Thinking counts against the output bound: one no larger than twice the least budget leaves the answer
    // no room, so Flash does not think (and Pro thinks as little as it can).
    ['gemini-2.5-flash', 'high', 1000, { thinkingBudget: 0 }],
    ['gemini-2.5-flash', 'max', 100_000, shown({ thinkingBudget: 24_576 })],
    ['gemini-2.5-flash-lite', 'none', 8192, { thinkingBudget: 0 }],
    ['models/gemini-2.5-flash', 'medium', 4000, shown({ thinkingBudget: 2000 })],
    // Gemini 2.5 Pro: 128..32768, thinking cannot be turned off.
    ['gemini-2.5-pro', 'minimal', 500, shown({ thinkingBudget: 128 })],
    ['gemini-2.5-pro', 'high', 10_000, shown({ thinkingBudget: 8000 })],
    ['gemini-2.5-pro', 'xhigh', 100_000, shown({ thinkingBudget: 32_768 })],
    // Gemini 3 Pro: only low and high.
    // `none`: the least there is, and no thoughts shown (the client asked for none).
    ['gemini-3-pro', 'none', 8192, { thinkingLevel: 'low' }],
    ['gemini-3-pro', 'minimal', 8192, shown({ thinkingLevel: 'low' })],
    ['gemini-3-pro', 'low', 8192, shown({ thinkingLevel: 'low' })],
    ['gemini-3-pro', 'medium', 8192, shown({ thinkingLevel: 'high' })],
    ['gemini-3-pro-preview', 'high', 8192, shown({ thinkingLevel: 'high' })],
    ['gemini-3-pro', 'max', 8192, shown({ thinkingLevel: 'high' })],
    // Gemini 3 Flash: minimal to high; none is the least there is.
    ['gemini-3-flash', 'none', 8192, { thinkingLevel: 'minimal' }],
    ['gemini-3-flash', 'minimal', 8192, shown({ thinkingLevel: 'minimal' })],
    ['gemini-3-flash', 'low', 8192, shown({ thinkingLevel: 'low' })],
    ['gemini-3-flash', 'medium', 8192, shown({ thinkingLevel: 'medium' })],
    ['gemini-3-flash', 'xhigh', 8192, shown({ thinkingLevel: 'high' })],
  ] as const)('%s %s at max_tokens %i', (model, effort, maxTokens, config) => {
    expect(geminiThinkingConfig(effort, model, maxTokens)).toStrictEqual(config);
  });

  it('Gemini 2.5 Pro at none: the least budget there is (thinking cannot be turned off)', () => {
    // The model thinks anyway, but the client asked for none: its thoughts are not asked for.
    expect(geminiThinkingConfig('none', 'gemini-2.5-pro', 8192)).toStrictEqual({ thinkingBudget: 128 });
  });

  it('a 2.5 budget stays within the model range for every effort and bound, or is off where Flash has no room', () => {
    const efforts: ReasoningEffort[] = ['minimal', 'low', 'medium', 'high', 'xhigh', 'max'];
    fc.assert(
      fc.property(
        fc.constantFrom(['gemini-2.5-flash', 512, 24_576] as const, ['gemini-2.5-pro', 128, 32_768] as const),
        fc.constantFrom(...efforts),
        fc.integer({ min: 1, max: 1_000_000 }),
        ([model, min, max], effort, maxTokens) => {
          const config = geminiThinkingConfig(effort, model, maxTokens);
          if (!('thinkingBudget' in config)) return false;
          if (model === 'gemini-2.5-flash' && maxTokens <= 2 * min) return config.thinkingBudget === 0 && config.includeThoughts === undefined;
          return config.thinkingBudget >= min && config.thinkingBudget <= max && config.includeThoughts === true;
        },
      ),
    );
  });
});

describe('defaultMaxTokensField', () => {
  it.each([
    ['o3', 'max_completion_tokens'],
    ['o4-mini', 'max_completion_tokens'],
    ['gpt-5', 'max_completion_tokens'],
    ['gpt-5.1', 'max_completion_tokens'],
    ['gpt-5-chat-latest', 'max_tokens'],
    ['gpt-4o-mini', 'max_tokens'],
    ['deepseek-reasoner', 'max_tokens'],
    ['openai/gpt-5', 'max_tokens'],
  ] as const)('%s: %s', (model, field) => {
    expect(defaultMaxTokensField(model)).toBe(field);
  });
});
