/**
 * Wire types of the OpenAI chat-completions convention, as the gateway speaks it to clients and to
 * OpenAI-compatible upstreams. Only the fields the gateway reads or writes are typed; unknown fields of
 * a request are refused by validation (src/openai/chat-request.ts), not silently dropped.
 */

export type Role = 'system' | 'developer' | 'user' | 'assistant' | 'tool';

export interface TextPart {
  type: 'text';
  text: string;
}
export interface ImagePart {
  type: 'image_url';
  image_url: { url: string; detail?: 'auto' | 'low' | 'high' };
}
export interface InputAudioPart {
  type: 'input_audio';
  input_audio: { data: string; format: string };
}
export interface FilePart {
  type: 'file';
  file: { file_id?: string; file_data?: string; filename?: string };
}
export interface RefusalPart {
  type: 'refusal';
  refusal: string;
}
export type ContentPart = TextPart | ImagePart | InputAudioPart | FilePart | RefusalPart;

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatMessage {
  role: Role;
  content: string | ContentPart[] | null;
  name?: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  refusal?: string | null;
}

export interface FunctionTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean | null };
}

export type ToolChoice =
  | 'none'
  | 'auto'
  | 'required'
  | { type: 'function'; function: { name: string } };

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; json_schema: { name: string; schema?: Record<string, unknown>; strict?: boolean | null; description?: string } };

/** A request after validation and defaulting. `max_tokens` is the gateway's output bound. */
export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  temperature: number;
  top_p: number;
  max_tokens: number | null;
  stream: boolean;
  include_usage: boolean;
  stop?: string | string[] | null;
  seed?: number | null;
  tools?: FunctionTool[];
  tool_choice?: ToolChoice;
  parallel_tool_calls?: boolean;
  response_format?: ResponseFormat;
  user?: string;
  presence_penalty?: number | null;
  frequency_penalty?: number | null;
  logit_bias?: Record<string, number> | null;
  logprobs?: boolean | null;
  top_logprobs?: number | null;
  /** Free-form caller metadata, forwarded where the upstream accepts it. */
  metadata?: Record<string, string>;
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call';

export interface AssistantMessage {
  role: 'assistant';
  content: string | null;
  refusal?: string | null;
  tool_calls?: ToolCall[];
}

export interface TokenUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** Partial tool call as it appears in stream deltas. */
export interface ToolCallDelta {
  index: number;
  id?: string;
  type?: 'function';
  function?: { name?: string; arguments?: string };
}

export interface ChunkDelta {
  role?: 'assistant';
  content?: string | null;
  refusal?: string | null;
  tool_calls?: ToolCallDelta[];
}

export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  system_fingerprint?: string | null;
  choices: { index: number; delta: ChunkDelta; finish_reason: FinishReason | null; logprobs?: unknown }[];
  usage?: TokenUsage | null;
  svc?: SvcMetadata;
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  system_fingerprint?: string | null;
  choices: { index: number; message: AssistantMessage; finish_reason: FinishReason; logprobs: unknown }[];
  usage: TokenUsage;
  svc: SvcMetadata;
}

/** The gateway's own metadata on every completion (documented in docs/api.md). */
export interface SvcMetadata {
  requested_model: string;
  routed_model: string;
  routed_provider: string;
  credits_used: number;
  /** Null only when the ledger could not confirm the charge in time (`settlement: "pending"`). */
  balance_remaining: number | null;
  /** Tokens the charge was computed from. */
  tokens_metered: { prompt: number; completion: number; total: number };
  /** Wall time from request receipt to the last byte of the answer, in ms. */
  latency_ms: number;
  /** Present when svc-auto chose the tier. */
  routing?: { tier: string; confidence: number; reason: string };
  /**
   * Present (`pending`) when the ledger could not be reached to confirm the charge: `credits_used` is the
   * charge being posted, retried until the ledger answers.
   */
  settlement?: 'pending';
  /** Every upstream attempt in order, when more than one was made. */
  attempts?: { provider: string; model: string; outcome: string }[];
}
