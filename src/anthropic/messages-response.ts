/**
 * The Anthropic Messages door's answers: the internal chat completion rendered as Anthropic's `message`,
 * and the stop reasons and usage in Anthropic's terms (shared with the stream encoder).
 */
import type { ChatCompletion, FinishReason, SvcMetadata, TokenUsage, ToolCall } from '../openai/chat-types.js';

export type StopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'refusal';

export type ContentBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown };

export interface AnthropicUsage {
  /** Input tokens not read from the cache (Anthropic counts cache reads apart). */
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
}

export interface AnthropicMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: ContentBlock[];
  stop_reason: StopReason | null;
  stop_sequence: string | null;
  usage: AnthropicUsage;
  svc?: SvcMetadata;
}

const STOP_REASONS: Record<FinishReason, StopReason> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  content_filter: 'refusal',
};

export function stopReasonOf(finish: FinishReason): StopReason {
  return STOP_REASONS[finish];
}

export function anthropicUsage(u: Pick<TokenUsage, 'prompt_tokens' | 'completion_tokens' | 'prompt_tokens_details'>): AnthropicUsage {
  const cached = u.prompt_tokens_details?.cached_tokens ?? 0;
  return { input_tokens: Math.max(0, u.prompt_tokens - cached), output_tokens: u.completion_tokens, cache_read_input_tokens: cached, cache_creation_input_tokens: 0 };
}

/** Tool arguments as the object Anthropic's `input` is; text that is not a JSON object is kept under `_raw`. */
export function toolInput(call: Pick<ToolCall['function'], 'arguments'>): unknown {
  try {
    const parsed: unknown = JSON.parse(call.arguments === '' ? '{}' : call.arguments);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? parsed : { _raw: call.arguments };
  } catch {
    return { _raw: call.arguments };
  }
}

export function renderMessage(answer: ChatCompletion, stopSequence: string | null): AnthropicMessage {
  const choice = answer.choices[0];
  const message = choice?.message;
  const content: ContentBlock[] = [];
  // The signature is Anthropic's proof of its own thinking; relayed thinking from another provider has none.
  if (message?.reasoning_content) content.push({ type: 'thinking', thinking: message.reasoning_content, signature: '' });
  if (message?.content) content.push({ type: 'text', text: message.content });
  for (const call of message?.tool_calls ?? []) content.push({ type: 'tool_use', id: call.id, name: call.function.name, input: toolInput(call.function) });
  return {
    id: answer.id,
    type: 'message',
    role: 'assistant',
    model: answer.model,
    content,
    stop_reason: stopSequence !== null ? 'stop_sequence' : stopReasonOf(choice?.finish_reason ?? 'stop'),
    stop_sequence: stopSequence,
    usage: anthropicUsage(answer.usage),
    svc: answer.svc,
  };
}
