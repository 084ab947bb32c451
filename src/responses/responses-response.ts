/**
 * The Responses door's answer: the `response` object (OpenAI's shape, with our `svc`), its output items
 * and usage, built alike for a whole answer (render) and at the end of a stream (the stream encoder).
 */
import type { AssistantMessage, ChatCompletion, ChatMessage, ChoiceLogprobs, FinishReason, SvcMetadata, TokenLogprob, TokenUsage } from '../openai/chat-types.js';
import { itemId } from './response-ids.js';
import type { ParsedResponsesRequest } from './responses-request.js';

export interface OutputText {
  type: 'output_text';
  text: string;
  annotations: never[];
  logprobs: ResponsesLogprob[];
}
export interface RefusalContent {
  type: 'refusal';
  refusal: string;
}
export type ItemStatus = 'in_progress' | 'completed' | 'incomplete';
export interface MessageItem {
  type: 'message';
  id: string;
  status: ItemStatus;
  role: 'assistant';
  content: (OutputText | RefusalContent)[];
}
export interface FunctionCallItem {
  type: 'function_call';
  id: string;
  call_id: string;
  name: string;
  arguments: string;
  status: ItemStatus;
}
export interface ReasoningItem {
  type: 'reasoning';
  id: string;
  summary: { type: 'summary_text'; text: string }[];
}
export type OutputItem = MessageItem | FunctionCallItem | ReasoningItem;

export interface ResponsesLogprob {
  token: string;
  logprob: number;
  bytes: number[];
  top_logprobs: { token: string; logprob: number; bytes: number[] }[];
}

export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

export interface ResponseObject {
  id: string;
  object: 'response';
  created_at: number;
  status: ResponseStatus;
  background: false;
  error: { code: string; message: string } | null;
  incomplete_details: { reason: 'max_output_tokens' | 'content_filter' } | null;
  instructions: string | null;
  max_output_tokens: number | null;
  max_tool_calls: number | null;
  model: string;
  output: OutputItem[];
  parallel_tool_calls: boolean;
  previous_response_id: string | null;
  prompt_cache_key: string | null;
  reasoning: { effort: string | null; summary: string | null };
  safety_identifier: string | null;
  service_tier: string;
  store: boolean;
  temperature: number | null;
  text: { format: object; verbosity: string };
  tool_choice: string | { type: 'function'; name: string };
  tools: object[];
  top_logprobs: number;
  top_p: number | null;
  truncation: 'auto' | 'disabled';
  usage: ResponsesUsage | null;
  user: string | null;
  metadata: Record<string, string>;
  svc?: SvcMetadata;
}

/** What a response says of itself besides its output: the request's settings, echoed as OpenAI does. */
export interface ResponseFrame {
  id: string;
  createdAt: number;
  model: string;
  request: ParsedResponsesRequest;
  /** Whether this response is kept (store, and storage on). */
  stored: boolean;
}

export function responsesUsage(u: TokenUsage): ResponsesUsage {
  return {
    input_tokens: u.prompt_tokens,
    input_tokens_details: { cached_tokens: u.prompt_tokens_details?.cached_tokens ?? 0 },
    output_tokens: u.completion_tokens,
    output_tokens_details: { reasoning_tokens: u.completion_tokens_details?.reasoning_tokens ?? 0 },
    total_tokens: u.total_tokens,
  };
}

export function responsesLogprobs(logprobs: ChoiceLogprobs | null | undefined): ResponsesLogprob[] {
  return (logprobs?.content ?? []).map((t: TokenLogprob) => ({
    token: t.token,
    logprob: t.logprob,
    bytes: t.bytes ?? [],
    top_logprobs: t.top_logprobs.map((top) => ({ token: top.token, logprob: top.logprob, bytes: top.bytes ?? [] })),
  }));
}

/** How the answer ended, in the Responses API's terms. */
export function statusOf(finish: FinishReason): { status: ResponseStatus; incomplete: ResponseObject['incomplete_details'] } {
  if (finish === 'length') return { status: 'incomplete', incomplete: { reason: 'max_output_tokens' } };
  if (finish === 'content_filter') return { status: 'incomplete', incomplete: { reason: 'content_filter' } };
  return { status: 'completed', incomplete: null };
}

export function responseObject(
  frame: ResponseFrame,
  state: { status: ResponseStatus; output: OutputItem[]; usage: ResponsesUsage | null; incomplete?: ResponseObject['incomplete_details']; error?: ResponseObject['error']; serviceTier?: string; svc?: SvcMetadata },
): ResponseObject {
  const b = frame.request.body;
  return {
    id: frame.id,
    object: 'response',
    created_at: frame.createdAt,
    status: state.status,
    background: false,
    error: state.error ?? null,
    incomplete_details: state.incomplete ?? null,
    instructions: b.instructions ?? null,
    max_output_tokens: b.max_output_tokens ?? null,
    max_tool_calls: b.max_tool_calls ?? null,
    model: frame.model,
    output: state.output,
    parallel_tool_calls: b.parallel_tool_calls ?? true,
    previous_response_id: b.previous_response_id ?? null,
    prompt_cache_key: b.prompt_cache_key ?? null,
    reasoning: { effort: b.reasoning?.effort ?? null, summary: b.reasoning?.summary ?? b.reasoning?.generate_summary ?? null },
    safety_identifier: b.safety_identifier ?? null,
    service_tier: state.serviceTier ?? 'default',
    store: frame.stored,
    // What the client set; null when unset, since each target then samples with its own default.
    temperature: b.temperature ?? null,
    text: { format: b.text?.format ?? { type: 'text' }, verbosity: b.text?.verbosity ?? 'medium' },
    tool_choice: b.tool_choice ?? 'auto',
    tools: frame.request.tools.map((t) => ({ type: 'function', name: t.name, description: t.description ?? null, parameters: t.parameters ?? null, strict: t.strict ?? null })),
    top_logprobs: b.top_logprobs ?? 0,
    top_p: b.top_p ?? null,
    truncation: b.truncation ?? 'disabled',
    usage: state.usage,
    user: b.user ?? null,
    metadata: b.metadata ?? {},
    ...(state.svc !== undefined ? { svc: state.svc } : {}),
  };
}

/** The output items of a whole answer: reasoning, then the message, then the function calls. */
export function outputItemsOf(responseId: string, message: AssistantMessage, logprobs: ChoiceLogprobs | null, status: ItemStatus): OutputItem[] {
  const items: OutputItem[] = [];
  if (message.reasoning_content) {
    items.push({ type: 'reasoning', id: itemId(responseId, 'rs', items.length), summary: [{ type: 'summary_text', text: message.reasoning_content }] });
  }
  const text = message.content ?? '';
  if (text !== '' || message.refusal || !message.tool_calls?.length) {
    const content: MessageItem['content'] = [];
    if (text !== '' || !message.refusal) content.push({ type: 'output_text', text, annotations: [], logprobs: responsesLogprobs(logprobs) });
    if (message.refusal) content.push({ type: 'refusal', refusal: message.refusal });
    items.push({ type: 'message', id: itemId(responseId, 'msg', items.length), status, role: 'assistant', content });
  }
  for (const call of message.tool_calls ?? []) {
    items.push({ type: 'function_call', id: itemId(responseId, 'fc', items.length), call_id: call.id, name: call.function.name, arguments: call.function.arguments, status: 'completed' });
  }
  // Only the last item can have been cut (by the output bound or a filter): the ones before it are whole.
  for (const [i, item] of items.entries()) if (item.type !== 'reasoning') item.status = i === items.length - 1 ? status : 'completed';
  return items;
}

/** The answer as the assistant turn of the stored conversation (what a later previous_response_id continues). */
export function assistantTurnOf(output: readonly OutputItem[]): ChatMessage | null {
  let text = '';
  const calls: NonNullable<ChatMessage['tool_calls']> = [];
  for (const item of output) {
    if (item.type === 'message') for (const c of item.content) text += c.type === 'output_text' ? c.text : c.refusal;
    else if (item.type === 'function_call') calls.push({ id: item.call_id, type: 'function', function: { name: item.name, arguments: item.arguments } });
  }
  if (text === '' && calls.length === 0) return null;
  return { role: 'assistant', content: text === '' && calls.length > 0 ? null : text, ...(calls.length > 0 ? { tool_calls: calls } : {}) };
}

export function renderResponse(frame: ResponseFrame, answer: ChatCompletion): ResponseObject {
  const choice = answer.choices[0];
  const finish = choice?.finish_reason ?? 'stop';
  const { status, incomplete } = statusOf(finish);
  const output = choice ? outputItemsOf(frame.id, choice.message, choice.logprobs, status === 'completed' ? 'completed' : 'incomplete') : [];
  return responseObject(
    { ...frame, model: answer.model },
    { status, incomplete, output, usage: responsesUsage(answer.usage), svc: answer.svc, ...(answer.service_tier ? { serviceTier: answer.service_tier } : {}) },
  );
}
