/**
 * What each upstream target takes, as data: a base per protocol, family rows matched on the upstream model
 * name, then the operator's `capabilities` override of the target (src/config/schema.ts). The first family
 * row that matches a target's protocol and model applies. src/providers/target-params.ts reads the result
 * to decide, per target, which of a request's parameters are sent and which are dropped.
 */
import type { ReasoningEffort } from '../openai/chat-types.js';
import type { ProviderProtocol } from './contract.js';
import { MAX_STOP_SEQUENCES } from '../openai/chat-request-schema.js';

export interface ModelCapabilities {
  /** `temperature` and `top_p`. */
  sampling: boolean;
  /** `presence_penalty` and `frequency_penalty`. */
  penalties: boolean;
  seed: boolean;
  /** `logprobs` / `top_logprobs`: a target without them refuses the request (it changes what comes back). */
  logprobs: boolean;
  /** `logit_bias`: refused where missing (token ids are one tokenizer's). */
  logitBias: boolean;
  /** How many `stop` sequences it takes; 0: none (OpenAI's o3, o4-mini and GPT-5 reasoning models). */
  maxStopSequences: number;
  /** Whether it reasons, so that `reasoning_effort` means something to it. */
  reasoning: boolean;
  /**
   * The `reasoning_effort` values it takes, where it takes only some (o3: low, medium, high); another value is
   * sent as the nearest of these. Null: any (translated by the adapter where the provider budgets thinking).
   */
  reasoningEfforts: readonly ReasoningEffort[] | null;
  /**
   * Whether sampling parameters may go with reasoning turned on: Anthropic requires temperature 1 and no
   * top_p with extended thinking, so they are dropped whenever a `reasoning_effort` turns thinking on.
   */
  samplingWhileReasoning: boolean;
  /**
   * Whether `tool_choice` required or a named function may go with reasoning on: Anthropic refuses forced
   * tool use with thinking, so there the tool choice (a guarantee) wins and `reasoning_effort` is dropped.
   */
  forcedToolWhileReasoning: boolean;
  /** The smallest thinking budget, which the output bound must exceed (Anthropic: 1024); 0: none. */
  minReasoningTokens: number;
  /** `response_format` json_schema (Anthropic: structured outputs, Claude 4.5 and Opus 4.1 on); refused where missing. */
  jsonSchema: boolean;
  /** GPT-5's `verbosity`. */
  verbosity: boolean;
  /** OpenAI's platform options: `store`, `metadata`, `service_tier`, `prompt_cache_*`, `safety_identifier`. */
  platformOptions: boolean;
  /** `user` (Anthropic: `metadata.user_id`); Gemini has no field for it. */
  user: boolean;
  /** `parallel_tool_calls: false`; Gemini has no switch. */
  parallelToolCallsOff: boolean;
  /** The most output tokens it produces; the bound sent is capped to it. Null: unknown, the gateway's bound goes. */
  maxOutputTokens: number | null;
}

/** The operator's override, as `capabilities:` on a target in the config file. */
export interface CapabilitiesOverride {
  sampling?: boolean | undefined;
  penalties?: boolean | undefined;
  reasoning?: boolean | undefined;
  max_stop_sequences?: number | undefined;
  max_output_tokens?: number | undefined;
}

/** Anything that may change a protocol's base: today Anthropic's API version. */
export interface ProviderTraits {
  /** Anthropic `2026-10-21` removed the sampling controls (docs/providers.md). */
  anthropicApiVersion?: string;
}

const OPENAI_COMPATIBLE: ModelCapabilities = {
  sampling: true,
  penalties: true,
  seed: true,
  logprobs: true,
  logitBias: true,
  maxStopSequences: 4,
  reasoning: false,
  reasoningEfforts: null,
  samplingWhileReasoning: true,
  forcedToolWhileReasoning: true,
  minReasoningTokens: 0,
  jsonSchema: true,
  verbosity: false,
  platformOptions: true,
  user: true,
  parallelToolCallsOff: true,
  maxOutputTokens: null,
};

const BASES: Record<ProviderProtocol, ModelCapabilities> = {
  'openai-compatible': OPENAI_COMPATIBLE,
  anthropic: {
    ...OPENAI_COMPATIBLE,
    penalties: false,
    seed: false,
    logprobs: false,
    logitBias: false,
    maxStopSequences: MAX_STOP_SEQUENCES,
    samplingWhileReasoning: false,
    forcedToolWhileReasoning: false,
    minReasoningTokens: 1024,
    jsonSchema: false,
    platformOptions: false,
  },
  gemini: {
    ...OPENAI_COMPATIBLE,
    logprobs: false,
    logitBias: false,
    maxStopSequences: 5,
    platformOptions: false,
    user: false,
    parallelToolCallsOff: false,
  },
  // The in-process simulator takes every parameter (and ignores most): tests see no dropped parameters there.
  sandbox: {
    ...OPENAI_COMPATIBLE,
    maxStopSequences: MAX_STOP_SEQUENCES,
    reasoning: true,
    verbosity: true,
  },
};

interface FamilyRow {
  protocol: ProviderProtocol;
  /** Matched on the upstream model name, lower-cased, after any `vendor/` prefix. */
  model: RegExp;
  caps: Partial<ModelCapabilities>;
}

/**
 * OpenAI's reasoning models refuse temperature, top_p, the penalties, logprobs and logit_bias, and o3, o4-mini
 * and GPT-5 refuse `stop` (OpenAI's API reference and reasoning guide). `gpt-5-chat` is not a reasoning model.
 */
const OPENAI_REASONING: Partial<ModelCapabilities> = {
  sampling: false,
  penalties: false,
  logprobs: false,
  logitBias: false,
  maxStopSequences: 0,
  reasoning: true,
};

export const FAMILIES: readonly FamilyRow[] = [
  // GPT-5.1 and later take `none` (and some `xhigh`); GPT-5 takes `minimal`; the o-series low to high.
  {
    protocol: 'openai-compatible',
    model: /^gpt-5\.\d(?!.*-chat)/,
    caps: { ...OPENAI_REASONING, verbosity: true, reasoningEfforts: ['none', 'low', 'medium', 'high', 'xhigh'], maxOutputTokens: 128_000 },
  },
  {
    protocol: 'openai-compatible',
    model: /^gpt-5(?!.*-chat)/,
    caps: { ...OPENAI_REASONING, verbosity: true, reasoningEfforts: ['minimal', 'low', 'medium', 'high'], maxOutputTokens: 128_000 },
  },
  { protocol: 'openai-compatible', model: /^o[134](-|$)/, caps: { ...OPENAI_REASONING, reasoningEfforts: ['low', 'medium', 'high'], maxOutputTokens: 100_000 } },
  // Extended thinking: Claude 3.7 Sonnet and every Claude 4 and later model.
  // Structured outputs (`output_config.format`): Claude Opus 4.1, and the 4.5 models and later.
  { protocol: 'anthropic', model: /^claude-opus-4-1(-\d{8})?$/, caps: { reasoning: true, jsonSchema: true, maxOutputTokens: 32_000 } },
  { protocol: 'anthropic', model: /^claude-opus-4(-0)?(-\d{8})?$/, caps: { reasoning: true, maxOutputTokens: 32_000 } },
  {
    protocol: 'anthropic',
    model: /^claude-(opus|sonnet|haiku)-(4-[5-9]|[5-9])|^claude-[5-9]/,
    caps: { reasoning: true, jsonSchema: true, maxOutputTokens: 64_000 },
  },
  { protocol: 'anthropic', model: /^claude-3-7-|^claude-(opus|sonnet|haiku)-[4-9]|^claude-[4-9]/, caps: { reasoning: true, maxOutputTokens: 64_000 } },
  // Thinking: Gemini 2.5 (thinkingBudget) and Gemini 3 and later (thinkingLevel).
  { protocol: 'gemini', model: /^gemini-(2\.5|[3-9])/, caps: { reasoning: true, maxOutputTokens: 65_536 } },
];

/** The target's capabilities: protocol base, the first matching family row, then the operator's override. */
export function capabilitiesFor(
  protocol: ProviderProtocol,
  model: string,
  traits: ProviderTraits = {},
  override: CapabilitiesOverride = {},
): ModelCapabilities {
  const name = model.toLowerCase().replace(/^.*\//, '');
  const family = FAMILIES.find((row) => row.protocol === protocol && row.model.test(name));
  const caps: ModelCapabilities = { ...BASES[protocol], ...family?.caps };
  if (protocol === 'anthropic' && traits.anthropicApiVersion === '2026-10-21') caps.sampling = false;
  if (override.sampling !== undefined) caps.sampling = override.sampling;
  if (override.penalties !== undefined) caps.penalties = override.penalties;
  if (override.reasoning !== undefined) caps.reasoning = override.reasoning;
  if (override.max_stop_sequences !== undefined) caps.maxStopSequences = override.max_stop_sequences;
  if (override.max_output_tokens !== undefined) caps.maxOutputTokens = override.max_output_tokens;
  return caps;
}

/**
 * The output bound's field an OpenAI-compatible model takes when the operator did not say: OpenAI's
 * reasoning families (o-series, GPT-5) answer 400 to `max_tokens` and take only `max_completion_tokens`;
 * most other servers (vLLM, Ollama, older OpenAI-compatible APIs) take only `max_tokens`. Whatever the field,
 * the gateway cuts output at the bound itself (upstream-output-bound.ts), so a server that ignored it could
 * not run past the hold.
 */
export function defaultMaxTokensField(model: string): 'max_tokens' | 'max_completion_tokens' {
  // `vendor/model` is an aggregator's route (OpenRouter, LiteLLM proxies): its own API, which takes
  // `max_tokens`; only OpenAI's own model names get the reasoning families' field.
  if (model.includes('/')) return 'max_tokens';
  return capabilitiesFor('openai-compatible', model).reasoning ? 'max_completion_tokens' : 'max_tokens';
}
