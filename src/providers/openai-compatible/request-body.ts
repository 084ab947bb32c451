/**
 * Gateway ChatRequest -> the body an OpenAI-compatible upstream expects. Only fields with a value are sent:
 * many compatible servers (Ollama, vLLM, llama.cpp) reject or misread explicit nulls for options they lack.
 * What the target takes was decided before (../target-params.ts): a null temperature (an o-series or GPT-5
 * reasoning model) is not sent, and `reasoning_effort` arrives only for models that reason.
 */
import type { ChatRequest } from '../../openai/chat-types.js';

export type MaxTokensField = 'max_tokens' | 'max_completion_tokens';

export interface UpstreamBodyOptions {
  model: string;
  stream: boolean;
  maxTokensField: MaxTokensField;
}

/** Request fields copied unchanged when they hold a value. */
const PASSTHROUGH = [
  'temperature',
  'top_p',
  'stop',
  'seed',
  'response_format',
  'user',
  'presence_penalty',
  'frequency_penalty',
  'logit_bias',
  'logprobs',
  'top_logprobs',
  'reasoning_effort',
  'verbosity',
  'store',
  'service_tier',
  'prompt_cache_key',
  'prompt_cache_retention',
  'prompt_cache_options',
  'safety_identifier',
] as const satisfies readonly (keyof ChatRequest)[];

export function buildUpstreamBody(request: ChatRequest, options: UpstreamBodyOptions): Record<string, unknown> {
  const body: Record<string, unknown> = { model: options.model, messages: request.messages };
  for (const field of PASSTHROUGH) {
    const value = request[field];
    if (value !== undefined && value !== null) body[field] = value;
  }
  // OpenAI answers 400 to `metadata` without `store: true` (it labels stored completions).
  if (request.metadata !== undefined && request.store === true) body.metadata = request.metadata;
  if (request.max_tokens !== null) body[options.maxTokensField] = request.max_tokens;
  // OpenAI answers 400 to tool_choice or parallel_tool_calls sent without tools.
  if (request.tools && request.tools.length > 0) {
    body.tools = request.tools;
    if (request.tool_choice !== undefined) body.tool_choice = request.tool_choice;
    if (request.parallel_tool_calls !== undefined) body.parallel_tool_calls = request.parallel_tool_calls;
  }
  if (options.stream) {
    // Always asked for, whatever the client chose: credits are metered from the upstream's own count.
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return body;
}
