/**
 * The zod schema of a chat-completions request body. Objects are strict: an argument the gateway does
 * not know is refused (as OpenAI does), never silently dropped, so a client learns its option had no effect.
 */
import { z } from 'zod';

/** OpenAI's prompt-cache breakpoint on a content part: accepted, and dropped (no other provider has one). */
const cacheBreakpoint = z.object({ mode: z.literal('explicit') }).strict().optional();

const text = z.object({ type: z.literal('text'), text: z.string(), prompt_cache_breakpoint: cacheBreakpoint }).strict();
const image = z
  .object({
    type: z.literal('image_url'),
    image_url: z.object({ url: z.string().min(1), detail: z.enum(['auto', 'low', 'high']).optional() }).strict(),
    prompt_cache_breakpoint: cacheBreakpoint,
  })
  .strict();
const audio = z
  .object({
    type: z.literal('input_audio'),
    input_audio: z.object({ data: z.string(), format: z.string() }).strict(),
    prompt_cache_breakpoint: cacheBreakpoint,
  })
  .strict();
const file = z
  .object({
    type: z.literal('file'),
    file: z.object({ file_id: z.string().optional(), file_data: z.string().optional(), filename: z.string().optional() }).strict(),
    prompt_cache_breakpoint: cacheBreakpoint,
  })
  .strict();
const refusal = z.object({ type: z.literal('refusal'), refusal: z.string() }).strict();

const userPart = z.discriminatedUnion('type', [text, image, audio, file]);
const assistantPart = z.discriminatedUnion('type', [text, refusal]);

const toolCall = z
  .object({
    id: z.string().min(1),
    type: z.literal('function'),
    function: z.object({ name: z.string().min(1), arguments: z.string() }).strict(),
  })
  .strict();

const name = z.string().min(1).max(64).optional();
const textContent = z.union([z.string(), z.array(text).min(1)]);

const systemMessage = z.object({ role: z.literal('system'), content: textContent, name }).strict();
const developerMessage = z.object({ role: z.literal('developer'), content: textContent, name }).strict();
const userMessage = z
  .object({ role: z.literal('user'), content: z.union([z.string(), z.array(userPart).min(1)]), name })
  .strict();
const assistantMessage = z
  .object({
    role: z.literal('assistant'),
    content: z.union([z.string(), z.array(assistantPart), z.null()]).optional(),
    name,
    // OpenAI accepts an explicit null and an empty list, and both mean "no calls" (clients echo them back).
    tool_calls: z.array(toolCall).nullable().optional(),
    refusal: z.string().nullable().optional(),
    // Only null: `{id}` names audio kept in OpenAI's storage, and `function_call` is the deprecated form of tool_calls.
    audio: z.null().optional(),
    function_call: z.null().optional(),
  })
  .strict()
  .refine((m) => (m.content !== undefined && m.content !== null) || (m.tool_calls != null && m.tool_calls.length > 0), {
    message: "an assistant message needs 'content' or 'tool_calls'",
    path: ['content'],
  });
// `name` is not OpenAI's field here, but OpenAI ignores it and LangChain JS sends it: accepted and dropped.
const toolMessage = z
  .object({ role: z.literal('tool'), content: textContent, tool_call_id: z.string().min(1), name: z.string().optional() })
  .strict();

export const messageSchema = z.discriminatedUnion('role', [
  systemMessage,
  developerMessage,
  userMessage,
  assistantMessage,
  toolMessage,
]);

const functionTool = z
  .object({
    type: z.literal('function'),
    function: z
      .object({
        name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, underscores or dashes'),
        description: z.string().optional(),
        parameters: z.record(z.string(), z.unknown()).optional(),
        strict: z.boolean().nullable().optional(),
      })
      .strict(),
  })
  .strict();

const namedFunction = z.object({ type: z.literal('function'), function: z.object({ name: z.string().min(1) }).strict() }).strict();

/**
 * `allowed_tools` keeps the full tool list (stable for OpenAI's prompt cache) while restricting which may be
 * called: parseChatRequest narrows `tools` to those named, which means the same to every target.
 */
const allowedTools = z
  .object({
    type: z.literal('allowed_tools'),
    allowed_tools: z.object({ mode: z.enum(['auto', 'required']), tools: z.array(namedFunction).min(1) }).strict(),
  })
  .strict();

const toolChoice = z.union([z.enum(['none', 'auto', 'required']), namedFunction, allowedTools]);

const responseFormat = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text') }).strict(),
  z.object({ type: z.literal('json_object') }).strict(),
  z
    .object({
      type: z.literal('json_schema'),
      json_schema: z
        .object({
          name: z.string().min(1).max(64),
          description: z.string().optional(),
          schema: z.record(z.string(), z.unknown()).optional(),
          strict: z.boolean().nullable().optional(),
        })
        .strict(),
    })
    .strict(),
]);

const maxTokens = z.number().int().min(1).nullable().optional();

/**
 * OpenAI takes up to 4 stop sequences, Gemini 5, Anthropic more: the gateway accepts up to 16 and each target
 * gets as many as it takes (src/providers/target-params.ts). Empty list = none.
 */
export const MAX_STOP_SEQUENCES = 16;

export const chatRequestSchema = z
  .object({
    model: z.string().min(1),
    messages: z.array(messageSchema).min(1, "'messages' must contain at least one message"),
    temperature: z.number().min(0).max(2).nullable().optional(),
    top_p: z.number().min(0).max(1).nullable().optional(),
    max_tokens: maxTokens,
    max_completion_tokens: maxTokens,
    stream: z.boolean().nullable().optional(),
    stream_options: z
      .object({ include_usage: z.boolean().optional(), include_obfuscation: z.boolean().optional() })
      .strict()
      .nullable()
      .optional(),
    stop: z.union([z.string(), z.array(z.string()).max(MAX_STOP_SEQUENCES)]).nullable().optional(),
    seed: z.number().int().nullable().optional(),
    tools: z.array(functionTool).max(128).optional(),
    tool_choice: toolChoice.optional(),
    parallel_tool_calls: z.boolean().optional(),
    response_format: responseFormat.optional(),
    user: z.string().max(256).optional(),
    presence_penalty: z.number().min(-2).max(2).nullable().optional(),
    frequency_penalty: z.number().min(-2).max(2).nullable().optional(),
    logit_bias: z
      .record(z.string().regex(/^\d+$/, 'keys must be token ids'), z.number().min(-100).max(100))
      .nullable()
      .optional(),
    logprobs: z.boolean().nullable().optional(),
    top_logprobs: z.number().int().min(0).max(20).nullable().optional(),
    n: z.number().int().min(1).nullable().optional(),
    reasoning_effort: z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']).nullable().optional(),
    verbosity: z.enum(['low', 'medium', 'high']).nullable().optional(),
    // Only text out: `["text"]` (or null) is what every target gives; audio output is refused in chat-request.ts.
    modalities: z.array(z.enum(['text', 'audio'])).nullable().optional(),
    // OpenAI platform options: forwarded to OpenAI-compatible targets, dropped for the others (docs/api.md).
    metadata: z.record(z.string().max(64), z.string().max(512)).nullable().optional(),
    store: z.boolean().nullable().optional(),
    service_tier: z.string().min(1).nullable().optional(),
    prompt_cache_key: z.string().nullable().optional(),
    prompt_cache_retention: z.enum(['in_memory', '24h']).nullable().optional(),
    prompt_cache_options: z
      .object({ mode: z.enum(['implicit', 'explicit']).optional(), ttl: z.literal('30m').optional() })
      .strict()
      .optional(),
    safety_identifier: z.string().max(64).nullable().optional(),
    // Refused unless null (chat-request.ts says why): the gateway cannot serve them on every target.
    audio: z.unknown().optional(),
    prediction: z.unknown().optional(),
    moderation: z.unknown().optional(),
  })
  .strict();

export type ChatRequestBody = z.infer<typeof chatRequestSchema>;
