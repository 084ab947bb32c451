/**
 * Gateway ChatRequest -> the body an OpenAI-compatible upstream expects. Only fields with a value are sent:
 * many compatible servers (Ollama, vLLM, llama.cpp) reject or misread explicit nulls for options they lack.
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
  'metadata',
] as const satisfies readonly (keyof ChatRequest)[];

export function buildUpstreamBody(request: ChatRequest, options: UpstreamBodyOptions): Record<string, unknown> {
  const body: Record<string, unknown> = { model: options.model, messages: request.messages };
  for (const field of PASSTHROUGH) {
    const value = request[field];
    if (value !== undefined && value !== null) body[field] = value;
  }
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
