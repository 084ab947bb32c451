/**
 * A non-streamed Messages API answer (`"type":"message"`) -> the contract's UpstreamCompletion, and the two
 * mappings streams share with it: stop reasons and usage.
 */
import type { UpstreamCompletion, UpstreamTokens } from '../contract.js';
import type { AssistantMessage, FinishReason, ToolCall } from '../../openai/chat-types.js';
import { isRecord, protocolError } from '../upstream-failures.js';
import { payloadError } from './errors.js';
import type { PrefillEcho } from './prefill.js';

/**
 * - `end_turn`, `stop_sequence`: the answer ended as asked.
 * - `max_tokens`, `model_context_window_exceeded`: cut by a bound, as OpenAI's `length`.
 * - `tool_use`: the model waits for tool results.
 * - `refusal`: the safety classifiers stopped it, as OpenAI's `content_filter`.
 * - `pause_turn` comes only from server-tool loops (web search), which this adapter never enables; like any
 *   value added later, it is read as an ordinary end rather than failing an answer that did arrive.
 */
const FINISH_BY_STOP_REASON: Readonly<Record<string, FinishReason>> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
};

export function finishReasonOf(stopReason: unknown, sawToolCall: boolean): FinishReason {
  if (typeof stopReason === 'string' && stopReason.length > 0) return FINISH_BY_STOP_REASON[stopReason] ?? 'stop';
  return sawToolCall ? 'tool_calls' : 'stop';
}

/**
 * `input_tokens` counts only what follows the last cache breakpoint; the prompt is that plus the tokens
 * written to and read from the cache ("total_input_tokens = cache_read_input_tokens +
 * cache_creation_input_tokens + input_tokens"). Null when either count is missing: the gateway then estimates.
 */
export function tokensOf(usage: Record<string, unknown>): UpstreamTokens | null {
  const input = count(usage.input_tokens);
  const output = count(usage.output_tokens);
  if (input === null || output === null) return null;
  const read = count(usage.cache_read_input_tokens);
  const cached = (count(usage.cache_creation_input_tokens) ?? 0) + (read ?? 0);
  // Only reads are OpenAI's `cached_tokens` (hits, priced below input); writes cost more than input and are
  // counted as prompt only. Thinking is part of output_tokens; `output_tokens_details.thinking_tokens` says
  // how much (at most output_tokens), where the API reports it.
  const tokens: UpstreamTokens = { promptTokens: input + cached, completionTokens: output };
  if (read !== null) tokens.cachedTokens = read;
  const details = usage.output_tokens_details;
  const thinking = typeof details === 'object' && details !== null ? count((details as Record<string, unknown>).thinking_tokens) : null;
  if (thinking !== null) tokens.reasoningTokens = Math.min(thinking, output);
  return tokens;
}

function count(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : null;
}

/** `echo` is set when the call continued a prefill: see ./prefill.ts. */
export function parseMessage(payload: unknown, echo: PrefillEcho | null): UpstreamCompletion {
  if (!isRecord(payload)) throw protocolError('upstream response is not a JSON object');
  if (payload.type === 'error') throw payloadError(payload);
  if (!Array.isArray(payload.content)) throw protocolError('upstream response has no `content` array');
  let text = '';
  let thinking = '';
  const toolCalls: ToolCall[] = [];
  for (const block of payload.content) {
    if (!isRecord(block)) throw protocolError('upstream content block is not an object');
    // Thinking is the model's working, relayed apart as reasoning; redacted thinking (encrypted) and
    // server-tool blocks are not text anyone can read.
    if (block.type === 'text' && typeof block.text === 'string') text += block.text;
    else if (block.type === 'thinking' && typeof block.thinking === 'string') thinking += block.thinking;
    else if (block.type === 'tool_use') toolCalls.push(toToolCall(block));
  }
  if (echo) text = echo.take(text);
  const message: AssistantMessage = {
    role: 'assistant',
    content: text.length > 0 || toolCalls.length === 0 ? text : null,
  };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (thinking.length > 0) message.reasoning_content = thinking;
  return {
    message,
    finishReason: finishReasonOf(payload.stop_reason, toolCalls.length > 0),
    usage: isRecord(payload.usage) ? tokensOf(payload.usage) : null,
    model: typeof payload.model === 'string' ? payload.model : null,
    ...(typeof payload.stop_sequence === 'string' ? { stopSequence: payload.stop_sequence } : {}),
  };
}

function toToolCall(block: Record<string, unknown>): ToolCall {
  if (typeof block.id !== 'string' || typeof block.name !== 'string') {
    throw protocolError('upstream tool_use block has no id or name');
  }
  return { id: block.id, type: 'function', function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) } };
}
