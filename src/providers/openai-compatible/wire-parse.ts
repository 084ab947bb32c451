/**
 * Reads OpenAI-shaped JSON from an upstream into the contract's types. Lenient where compatible servers
 * differ harmlessly (missing `index`, unknown finish reasons, extra fields); strict only where guessing
 * would corrupt the answer.
 */
import type { StreamEvent, UpstreamCompletion, UpstreamMeta, UpstreamTokens } from '../contract.js';
import type {
  AssistantMessage,
  ChoiceLogprobs,
  ChunkDelta,
  FinishReason,
  TokenLogprob,
  ToolCall,
  ToolCallDelta,
} from '../../openai/chat-types.js';
import { isRecord, protocolError } from '../upstream-failures.js';
import { payloadError } from './upstream-errors.js';

const FINISH_REASONS: ReadonlySet<string> = new Set<FinishReason>([
  'stop',
  'length',
  'tool_calls',
  'content_filter',
  'function_call',
]);

/** Appends to `events` those one `chat.completion.chunk` carries: a delta for choice 0 and/or a usage report. */
export function chunkEvents(payload: unknown, events: StreamEvent[]): void {
  if (!isRecord(payload)) throw protocolError('upstream stream chunk is not a JSON object');
  if (payload.error !== undefined && payload.error !== null) throw payloadError(payload);
  const meta = toMeta(payload);
  const choices = payload.choices;
  if (choices !== undefined && choices !== null) {
    if (!Array.isArray(choices)) throw protocolError('upstream stream chunk has a non-array `choices`');
    const choice = firstChoice(choices);
    if (choice) {
      const delta = toDelta(choice.delta);
      const finishReason = toFinishReason(choice.finish_reason);
      const logprobs = toLogprobs(choice.logprobs);
      if (finishReason !== null || Object.keys(delta).length > 0 || logprobs !== null) {
        events.push({ type: 'delta', delta, finishReason, ...(logprobs ? { logprobs } : {}), ...(meta ? { meta } : {}) });
      }
    }
  }
  const usage = toUsage(payload.usage);
  if (usage) events.push({ type: 'usage', usage, ...(meta ? { meta } : {}) });
}

export function parseCompletion(payload: unknown): UpstreamCompletion {
  if (!isRecord(payload)) throw protocolError('upstream response is not a JSON object');
  if (payload.error !== undefined && payload.error !== null) throw payloadError(payload);
  const choice = Array.isArray(payload.choices) ? firstChoice(payload.choices) : undefined;
  if (!choice || !isRecord(choice.message)) throw protocolError('upstream response has no choices[0].message');
  const raw = choice.message;
  const message: AssistantMessage = { role: 'assistant', content: typeof raw.content === 'string' ? raw.content : null };
  if (typeof raw.refusal === 'string' || raw.refusal === null) message.refusal = raw.refusal;
  if (Array.isArray(raw.tool_calls) && raw.tool_calls.length > 0) message.tool_calls = raw.tool_calls.map(toToolCall);
  const reasoning = reasoningOf(raw);
  if (reasoning) message.reasoning_content = reasoning;
  // Some servers leave finish_reason null on a complete non-streamed answer; it did finish.
  const finishReason = toFinishReason(choice.finish_reason) ?? (message.tool_calls ? 'tool_calls' : 'stop');
  const logprobs = toLogprobs(choice.logprobs);
  const meta = toMeta(payload);
  return {
    message,
    finishReason,
    usage: toUsage(payload.usage),
    model: typeof payload.model === 'string' ? payload.model : null,
    logprobs,
    ...(meta ? { meta } : {}),
  };
}

/** `system_fingerprint`, `service_tier` and `model`, which OpenAI repeats on every chunk; null when none is there. */
function toMeta(payload: Record<string, unknown>): UpstreamMeta | null {
  const meta: UpstreamMeta = {};
  if (typeof payload.system_fingerprint === 'string') meta.systemFingerprint = payload.system_fingerprint;
  if (typeof payload.service_tier === 'string') meta.serviceTier = payload.service_tier;
  if (typeof payload.model === 'string') meta.model = payload.model;
  return meta.systemFingerprint === undefined && meta.serviceTier === undefined && meta.model === undefined ? null : meta;
}

/**
 * Reasoning text: `reasoning_content` (DeepSeek, vLLM, llama.cpp) or `reasoning` (OpenRouter, Ollama's
 * OpenAI endpoint, LM Studio). Some servers send both with the same text; the first one counts.
 */
function reasoningOf(raw: Record<string, unknown>): string | null {
  if (typeof raw.reasoning_content === 'string' && raw.reasoning_content.length > 0) return raw.reasoning_content;
  if (typeof raw.reasoning === 'string' && raw.reasoning.length > 0) return raw.reasoning;
  return null;
}

/** `choices[0].logprobs`, relayed as OpenAI shapes it; a shape that is not that is dropped, not guessed at. */
function toLogprobs(raw: unknown): ChoiceLogprobs | null {
  if (!isRecord(raw)) return null;
  const content = tokenLogprobs(raw.content);
  const refusal = tokenLogprobs(raw.refusal);
  if (content === null && refusal === null) return null;
  return { content, refusal };
}

function tokenLogprobs(raw: unknown): TokenLogprob[] | null {
  if (!Array.isArray(raw)) return null;
  const out: TokenLogprob[] = [];
  for (const entry of raw) {
    if (!isRecord(entry) || typeof entry.token !== 'string' || typeof entry.logprob !== 'number') return null;
    const top = Array.isArray(entry.top_logprobs) ? entry.top_logprobs : [];
    out.push({
      token: entry.token,
      logprob: entry.logprob,
      bytes: byteList(entry.bytes),
      top_logprobs: top.flatMap((t) =>
        isRecord(t) && typeof t.token === 'string' && typeof t.logprob === 'number'
          ? [{ token: t.token, logprob: t.logprob, bytes: byteList(t.bytes) }]
          : [],
      ),
    });
  }
  return out;
}

function byteList(raw: unknown): number[] | null {
  return Array.isArray(raw) && raw.every((b) => typeof b === 'number') ? (raw as number[]) : null;
}

/** The choice with index 0; servers that omit `index` send one choice, so the first one is it. */
function firstChoice(choices: unknown[]): Record<string, unknown> | undefined {
  for (const c of choices) {
    if (isRecord(c) && (c.index === 0 || c.index === undefined)) return c;
  }
  return undefined;
}

function toDelta(raw: unknown): ChunkDelta {
  const delta: ChunkDelta = {};
  if (!isRecord(raw)) return delta;
  if (raw.role === 'assistant') delta.role = 'assistant';
  if (typeof raw.content === 'string' || raw.content === null) delta.content = raw.content;
  if (typeof raw.refusal === 'string' || raw.refusal === null) delta.refusal = raw.refusal;
  if (Array.isArray(raw.tool_calls)) delta.tool_calls = raw.tool_calls.map(toToolCallDelta);
  const reasoning = reasoningOf(raw);
  if (reasoning) delta.reasoning_content = reasoning;
  return delta;
}

function toToolCallDelta(raw: unknown, position: number): ToolCallDelta {
  if (!isRecord(raw)) throw protocolError('upstream tool call delta is not an object');
  const out: ToolCallDelta = { index: typeof raw.index === 'number' ? raw.index : position };
  if (typeof raw.id === 'string') out.id = raw.id;
  if (raw.type === 'function') out.type = 'function';
  if (isRecord(raw.function)) {
    const fn: { name?: string; arguments?: string } = {};
    if (typeof raw.function.name === 'string') fn.name = raw.function.name;
    if (typeof raw.function.arguments === 'string') fn.arguments = raw.function.arguments;
    out.function = fn;
  }
  return out;
}

function toToolCall(raw: unknown): ToolCall {
  if (!isRecord(raw) || !isRecord(raw.function) || typeof raw.function.name !== 'string') {
    throw protocolError('upstream tool call has no function name');
  }
  const args = raw.function.arguments;
  return {
    id: typeof raw.id === 'string' ? raw.id : '',
    type: 'function',
    function: { name: raw.function.name, arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}) },
  };
}

/** Unknown reasons (`eos`, `end_turn` from loosely compatible servers) still mean the answer ended normally. */
function toFinishReason(raw: unknown): FinishReason | null {
  if (typeof raw !== 'string' || raw.length === 0) return null;
  return isFinishReason(raw) ? raw : 'stop';
}

function isFinishReason(raw: string): raw is FinishReason {
  return FINISH_REASONS.has(raw);
}

function toUsage(raw: unknown): UpstreamTokens | null {
  if (!isRecord(raw)) return null;
  const prompt = raw.prompt_tokens;
  const completion = raw.completion_tokens;
  if (typeof prompt !== 'number' || typeof completion !== 'number') return null;
  const tokens: UpstreamTokens = { promptTokens: prompt, completionTokens: completion };
  // DeepSeek names its cache hits `prompt_cache_hit_tokens`; OpenAI and most others use the details.
  const cached = detail(raw.prompt_tokens_details, 'cached_tokens') ?? countOf(raw.prompt_cache_hit_tokens);
  const reasoning = detail(raw.completion_tokens_details, 'reasoning_tokens');
  if (cached !== null) tokens.cachedTokens = cached;
  if (reasoning !== null) tokens.reasoningTokens = reasoning;
  return tokens;
}

function detail(raw: unknown, field: string): number | null {
  return isRecord(raw) ? countOf(raw[field]) : null;
}

function countOf(raw: unknown): number | null {
  return typeof raw === 'number' ? raw : null;
}
