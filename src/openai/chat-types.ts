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

export type ReasoningEffort = 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | 'max';

/**
 * A request after validation. `max_tokens` is the gateway's output bound. `temperature` and `top_p` are null
 * when the client sent none: each target's adapter decides what to send (src/providers/target-params.ts
 * applies the spec's defaults only where the target takes sampling parameters).
 */
export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  temperature: number | null;
  top_p: number | null;
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
  /** Mapped per target: OpenAI's field, Anthropic's thinking budget, Gemini's thinkingConfig. */
  reasoning_effort?: ReasoningEffort;
  verbosity?: 'low' | 'medium' | 'high';
  /** Free-form caller metadata, forwarded to OpenAI-compatible targets together with `store: true`. */
  metadata?: Record<string, string>;
  /** OpenAI platform options, forwarded to OpenAI-compatible targets only. */
  store?: boolean;
  service_tier?: string;
  prompt_cache_key?: string;
  prompt_cache_retention?: 'in_memory' | '24h';
  prompt_cache_options?: { mode?: 'implicit' | 'explicit'; ttl?: '30m' };
  safety_identifier?: string;
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call';

export interface AssistantMessage {
  role: 'assistant';
  content: string | null;
  refusal?: string | null;
  tool_calls?: ToolCall[];
  /**
   * The model's reasoning text, as DeepSeek and vLLM name it (Anthropic thinking, Gemini thought parts):
   * present only when the upstream sent some and the operator relays it (`server.relay_reasoning`).
   */
  reasoning_content?: string;
}

export interface TokenUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** Prompt tokens read from the provider's cache (part of prompt_tokens). */
  prompt_tokens_details?: { cached_tokens: number };
  /** Output tokens the model spent reasoning (part of completion_tokens, and charged as output). */
  completion_tokens_details?: { reasoning_tokens: number };
}

/** One token's log probability, as OpenAI reports it (`choices[].logprobs.content[]`). */
export interface TokenLogprob {
  token: string;
  logprob: number;
  bytes: number[] | null;
  top_logprobs: { token: string; logprob: number; bytes: number[] | null }[];
}

/** `choices[].logprobs`: relayed from OpenAI-compatible upstreams; null from the others. */
export interface ChoiceLogprobs {
  content: TokenLogprob[] | null;
  refusal: TokenLogprob[] | null;
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
  /** A piece of the model's reasoning text (see AssistantMessage.reasoning_content). */
  reasoning_content?: string;
}

export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  system_fingerprint?: string | null;
  service_tier?: string | null;
  choices: { index: number; delta: ChunkDelta; logprobs?: ChoiceLogprobs | null; finish_reason: FinishReason | null }[];
  usage?: TokenUsage | null;
  svc?: SvcMetadata;
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  system_fingerprint?: string | null;
  service_tier?: string | null;
  choices: { index: number; message: AssistantMessage; logprobs: ChoiceLogprobs | null; finish_reason: FinishReason }[];
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
