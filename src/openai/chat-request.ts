/**
 * Validation of a chat-completions body: the zod schema checks shapes and ranges, then the rules that
 * span fields. Every refusal names the parameter (`messages[2].role`) and says what to fix.
 */
import { chatRequestSchema, type ChatRequestBody } from './chat-request-schema.js';
import type { ChatMessage, ChatRequest, ContentPart } from './chat-types.js';
import { invalidRequest } from './errors.js';
import { safeParseReporting, validationError } from './validation-errors.js';

/** Parameters OpenAI documents that this gateway refuses, with the reason given to the client. */
const UNSUPPORTED: Record<string, string> = {
  functions: "'functions' is deprecated; send 'tools' instead",
  function_call: "'function_call' is deprecated; send 'tool_choice' instead",
  web_search_options: 'web search is not supported by this gateway',
};

/** Accepted as null (OpenAI's types allow it), refused with a value: no target of the gateway can serve them. */
const UNSUPPORTED_VALUES: Record<'audio' | 'prediction' | 'moderation', string> = {
  audio: 'audio output is not supported by this gateway',
  prediction: 'predicted outputs are not supported by this gateway',
  moderation: "moderation results cannot be returned by this gateway's targets",
};

function unsupported(param: string, why: string): Error {
  return invalidRequest(`Unsupported parameter '${param}': ${why}.`, param, 'unsupported_parameter');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Shapes OpenAI's API takes that no target of the gateway can serve: refused as unsupported (naming the
 * part), not as a malformed body, so a client learns the option exists and is not served here.
 */
function refuseUnservedShapes(body: unknown): void {
  if (!isRecord(body)) return;
  const tools = Array.isArray(body.tools) ? body.tools : [];
  tools.forEach((tool, i) => {
    if (isRecord(tool) && tool.type === 'custom') throw unsupported(`tools[${i}]`, 'custom (free-form) tools are not supported by this gateway; declare a function tool');
  });
  if (isRecord(body.tool_choice) && body.tool_choice.type === 'custom') {
    throw unsupported('tool_choice', 'custom (free-form) tools are not supported by this gateway');
  }
  const messages = Array.isArray(body.messages) ? body.messages : [];
  messages.forEach((m, i) => {
    if (!isRecord(m)) return;
    if (m.role === 'function') throw unsupported(`messages[${i}].role`, "'function' messages are deprecated; send role 'tool' with its 'tool_call_id'");
    if (m.role !== 'assistant') return;
    if (m.audio != null) throw unsupported(`messages[${i}].audio`, "audio kept in OpenAI's storage cannot be read by this gateway; send the transcript as content");
    if (m.function_call != null) throw unsupported(`messages[${i}].function_call`, "'function_call' is deprecated; send 'tool_calls'");
    const calls = Array.isArray(m.tool_calls) ? m.tool_calls : [];
    calls.forEach((c, j) => {
      if (isRecord(c) && c.type === 'custom') throw unsupported(`messages[${i}].tool_calls[${j}]`, 'custom (free-form) tool calls are not supported by this gateway');
    });
  });
}

/** Parses and validates a decoded JSON body into the gateway's normalized request. Throws GatewayError (400). */
export function parseChatRequest(body: unknown): ChatRequest {
  const result = safeParseReporting(chatRequestSchema, body);
  if (!result.success) {
    refuseUnservedShapes(body);
    throw validationError(result.error, UNSUPPORTED);
  }
  const b = result.data;
  for (const [param, why] of Object.entries(UNSUPPORTED_VALUES)) {
    if (b[param as keyof typeof UNSUPPORTED_VALUES] != null) throw unsupported(param, why);
  }
  if (b.modalities?.includes('audio')) {
    throw invalidRequest("Unsupported value for 'modalities': only text output is supported by this gateway.", 'modalities', 'unsupported_value');
  }
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
  if (typeof choice === 'object' && choice.type === 'function' && !b.tools?.some((t) => t.function.name === choice.function.name)) {
    throw invalidRequest(`'tool_choice' names a function that is not in 'tools'.`, 'tool_choice.function.name');
  }
  let tools = b.tools;
  let toolChoice: ChatRequest['tool_choice'];
  if (typeof choice === 'object' && choice.type === 'allowed_tools') {
    const allowed = new Set(choice.allowed_tools.tools.map((t) => t.function.name));
    const missing = [...allowed].find((n) => !b.tools?.some((t) => t.function.name === n));
    if (missing !== undefined) {
      throw invalidRequest(`'tool_choice.allowed_tools' names '${missing}', which is not in 'tools'.`, 'tool_choice.allowed_tools.tools');
    }
    tools = b.tools?.filter((t) => allowed.has(t.function.name));
    toolChoice = choice.allowed_tools.mode;
  } else {
    toolChoice = choice;
  }
  const req: ChatRequest = {
    model: b.model,
    messages: b.messages.map(normalizeMessage),
    // Null: the client chose none, and each target's defaults apply (src/providers/target-params.ts).
    temperature: b.temperature ?? null,
    top_p: b.top_p ?? null,
    max_tokens: b.max_completion_tokens ?? b.max_tokens ?? null,
    stream,
    include_usage: b.stream_options?.include_usage === true,
  };
  // `stop: []` asks for nothing, as OpenAI reads it.
  if (b.stop != null && b.stop.length > 0) req.stop = b.stop;
  if (b.seed != null) req.seed = b.seed;
  if (tools !== undefined) req.tools = tools;
  if (toolChoice !== undefined) req.tool_choice = toolChoice;
  if (b.parallel_tool_calls !== undefined) req.parallel_tool_calls = b.parallel_tool_calls;
  if (b.response_format !== undefined) req.response_format = b.response_format;
  if (b.user !== undefined) req.user = b.user;
  if (b.presence_penalty != null) req.presence_penalty = b.presence_penalty;
  if (b.frequency_penalty != null) req.frequency_penalty = b.frequency_penalty;
  if (b.logit_bias != null) req.logit_bias = b.logit_bias;
  if (b.logprobs != null) req.logprobs = b.logprobs;
  if (b.top_logprobs != null) req.top_logprobs = b.top_logprobs;
  if (b.reasoning_effort != null) req.reasoning_effort = b.reasoning_effort;
  if (b.verbosity != null) req.verbosity = b.verbosity;
  if (b.metadata != null) req.metadata = b.metadata;
  if (b.store != null) req.store = b.store;
  if (b.service_tier != null) req.service_tier = b.service_tier;
  if (b.prompt_cache_key != null) req.prompt_cache_key = b.prompt_cache_key;
  if (b.prompt_cache_retention != null) req.prompt_cache_retention = b.prompt_cache_retention;
  if (b.prompt_cache_options !== undefined) req.prompt_cache_options = b.prompt_cache_options;
  if (b.safety_identifier != null) req.safety_identifier = b.safety_identifier;
  return req;
}

type ParsedMessage = ChatRequestBody['messages'][number];

/**
 * The message as the adapters read it: what OpenAI accepts and ignores (a tool message's `name`, assistant
 * `tool_calls: null` or `[]`, `audio: null`, content parts' `prompt_cache_breakpoint`) is left out here, so
 * that no upstream receives a field it may refuse.
 */
function normalizeMessage(m: ParsedMessage): ChatMessage {
  const content = Array.isArray(m.content) ? m.content.map(withoutBreakpoint) : m.content;
  switch (m.role) {
    case 'tool':
      return { role: 'tool', content: content ?? '', tool_call_id: m.tool_call_id };
    case 'assistant': {
      const out: ChatMessage = { role: 'assistant', content: content ?? null };
      if (m.name !== undefined) out.name = m.name;
      if (m.tool_calls != null && m.tool_calls.length > 0) out.tool_calls = m.tool_calls;
      if (m.refusal !== undefined) out.refusal = m.refusal;
      return out;
    }
    default: {
      const out: ChatMessage = { role: m.role, content: content ?? '' };
      if (m.name !== undefined) out.name = m.name;
      return out;
    }
  }
}

function withoutBreakpoint<P extends { prompt_cache_breakpoint?: unknown }>(part: P): ContentPart {
  const { prompt_cache_breakpoint: _dropped, ...rest } = part;
  return rest as unknown as ContentPart;
}
