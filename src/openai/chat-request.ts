/**
 * Validation of a chat-completions body: the zod schema checks shapes and ranges, then the rules that
 * span fields. Every refusal names the parameter (`messages[2].role`) and says what to fix.
 */
import { chatRequestSchema } from './chat-request-schema.js';
import type { ChatMessage, ChatRequest } from './chat-types.js';
import { invalidRequest } from './errors.js';
import { validationError } from './validation-errors.js';

const DEFAULT_TEMPERATURE = 0.7;
const DEFAULT_TOP_P = 1;

/** Parameters OpenAI documents that this gateway refuses, with the reason given to the client. */
const UNSUPPORTED: Record<string, string> = {
  functions: "'functions' is deprecated; send 'tools' instead",
  function_call: "'function_call' is deprecated; send 'tool_choice' instead",
  audio: 'audio output is not supported by this gateway',
  modalities: 'only text output is supported by this gateway',
  prediction: 'predicted outputs are not supported by this gateway',
  web_search_options: 'web search is not supported by this gateway',
  reasoning_effort: "'reasoning_effort' is not supported: pick the svc-smart alias for hard reasoning",
};

/** Parses and validates a decoded JSON body into the gateway's normalized request. Throws GatewayError (400). */
export function parseChatRequest(body: unknown): ChatRequest {
  const result = chatRequestSchema.safeParse(body, { reportInput: true });
  if (!result.success) throw validationError(result.error, UNSUPPORTED);
  const b = result.data;
  if (b.n != null && b.n > 1) {
    throw invalidRequest("Only n=1 is supported: send one request per completion you need.", 'n', 'unsupported_value');
  }
  if (b.max_tokens != null && b.max_completion_tokens != null && b.max_tokens !== b.max_completion_tokens) {
    throw invalidRequest(
      "'max_tokens' and 'max_completion_tokens' disagree; send only 'max_completion_tokens'.",
      'max_tokens',
    );
  }
  const stream = b.stream ?? false;
  if (b.stream_options != null && !stream) {
    throw invalidRequest("The 'stream_options' parameter is only allowed when 'stream' is true.", 'stream_options');
  }
  if (b.top_logprobs != null && b.logprobs !== true) {
    throw invalidRequest("'top_logprobs' requires 'logprobs' to be true.", 'top_logprobs');
  }
  if (b.tool_choice !== undefined && b.tool_choice !== 'none' && b.tool_choice !== 'auto' && !b.tools?.length) {
    throw invalidRequest("'tool_choice' requires 'tools'.", 'tool_choice');
  }
  const choice = b.tool_choice;
  if (typeof choice === 'object' && !b.tools?.some((t) => t.function.name === choice.function.name)) {
    throw invalidRequest(`'tool_choice' names a function that is not in 'tools'.`, 'tool_choice.function.name');
  }
  const req: ChatRequest = {
    model: b.model,
    messages: b.messages as ChatMessage[],
    temperature: b.temperature ?? DEFAULT_TEMPERATURE,
    top_p: b.top_p ?? DEFAULT_TOP_P,
    max_tokens: b.max_completion_tokens ?? b.max_tokens ?? null,
    stream,
    include_usage: b.stream_options?.include_usage === true,
  };
  if (b.stop != null) req.stop = b.stop;
  if (b.seed != null) req.seed = b.seed;
  if (b.tools !== undefined) req.tools = b.tools;
  if (b.tool_choice !== undefined) req.tool_choice = b.tool_choice;
  if (b.parallel_tool_calls !== undefined) req.parallel_tool_calls = b.parallel_tool_calls;
  if (b.response_format !== undefined) req.response_format = b.response_format;
  if (b.user !== undefined) req.user = b.user;
  if (b.presence_penalty != null) req.presence_penalty = b.presence_penalty;
  if (b.frequency_penalty != null) req.frequency_penalty = b.frequency_penalty;
  if (b.logit_bias != null) req.logit_bias = b.logit_bias;
  if (b.logprobs != null) req.logprobs = b.logprobs;
  if (b.top_logprobs != null) req.top_logprobs = b.top_logprobs;
  if (b.metadata !== undefined) req.metadata = b.metadata;
  return req;
}
