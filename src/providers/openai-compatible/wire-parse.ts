/**
 * Reads OpenAI-shaped JSON from an upstream into the contract's types. Lenient where compatible servers
 * differ harmlessly (missing `index`, unknown finish reasons, extra fields); strict only where guessing
 * would corrupt the answer.
 */
import type { StreamEvent, UpstreamCompletion, UpstreamTokens } from '../contract.js';
import type { AssistantMessage, ChunkDelta, FinishReason, ToolCall, ToolCallDelta } from '../../openai/chat-types.js';
import { isRecord, protocolError } from '../upstream-failures.js';
import { payloadError } from './upstream-errors.js';

const FINISH_REASONS: ReadonlySet<string> = new Set<FinishReason>([
  'stop',
  'length',
  'tool_calls',
  'content_filter',
  'function_call',
]);

/** The events one `chat.completion.chunk` carries: a delta for choice 0 and/or a usage report. */
export function chunkEvents(payload: unknown): StreamEvent[] {
  if (!isRecord(payload)) throw protocolError('upstream stream chunk is not a JSON object');
  if (payload.error !== undefined && payload.error !== null) throw payloadError(payload);
  const events: StreamEvent[] = [];
  const choices = payload.choices;
  if (choices !== undefined && choices !== null) {
    if (!Array.isArray(choices)) throw protocolError('upstream stream chunk has a non-array `choices`');
    const choice = firstChoice(choices);
    if (choice) {
      const delta = toDelta(choice.delta);
      const finishReason = toFinishReason(choice.finish_reason);
      if (finishReason !== null || Object.keys(delta).length > 0) events.push({ type: 'delta', delta, finishReason });
    }
  }
  const usage = toUsage(payload.usage);
  if (usage) events.push({ type: 'usage', usage });
  return events;
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
  // Some servers leave finish_reason null on a complete non-streamed answer; it did finish.
  const finishReason = toFinishReason(choice.finish_reason) ?? (message.tool_calls ? 'tool_calls' : 'stop');
  return {
    message,
    finishReason,
    usage: toUsage(payload.usage),
    model: typeof payload.model === 'string' ? payload.model : null,
  };
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
  return { promptTokens: prompt, completionTokens: completion };
}
