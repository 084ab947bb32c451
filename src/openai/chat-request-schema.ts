/**
 * The zod schema of a chat-completions request body. Objects are strict: an argument the gateway does
 * not know is refused (as OpenAI does), never silently dropped, so a client learns its option had no effect.
 */
import { z } from 'zod';

const text = z.object({ type: z.literal('text'), text: z.string() }).strict();
const image = z
  .object({
    type: z.literal('image_url'),
    image_url: z.object({ url: z.string().min(1), detail: z.enum(['auto', 'low', 'high']).optional() }).strict(),
  })
  .strict();
const audio = z
  .object({ type: z.literal('input_audio'), input_audio: z.object({ data: z.string(), format: z.string() }).strict() })
  .strict();
const file = z
  .object({
    type: z.literal('file'),
    file: z.object({ file_id: z.string().optional(), file_data: z.string().optional(), filename: z.string().optional() }).strict(),
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
    tool_calls: z.array(toolCall).min(1).optional(),
    refusal: z.string().nullable().optional(),
  })
  .strict()
  .refine((m) => (m.content !== undefined && m.content !== null) || m.tool_calls !== undefined, {
    message: "an assistant message needs 'content' or 'tool_calls'",
    path: ['content'],
  });
const toolMessage = z
  .object({ role: z.literal('tool'), content: textContent, tool_call_id: z.string().min(1) })
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

const toolChoice = z.union([
  z.enum(['none', 'auto', 'required']),
  z.object({ type: z.literal('function'), function: z.object({ name: z.string().min(1) }).strict() }).strict(),
]);

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

export const chatRequestSchema = z
  .object({
    model: z.string().min(1),
    messages: z.array(messageSchema).min(1, "'messages' must contain at least one message"),
    temperature: z.number().min(0).max(2).nullable().optional(),
    top_p: z.number().min(0).max(1).nullable().optional(),
    max_tokens: maxTokens,
    max_completion_tokens: maxTokens,
    stream: z.boolean().nullable().optional(),
    stream_options: z.object({ include_usage: z.boolean().optional() }).strict().nullable().optional(),
    stop: z.union([z.string(), z.array(z.string()).min(1).max(4)]).nullable().optional(),
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
    metadata: z.record(z.string().max(64), z.string().max(512)).optional(),
    // Accepted for compatibility and ignored: they only steer OpenAI's own storage and scheduling.
    store: z.boolean().nullable().optional(),
    service_tier: z.string().nullable().optional(),
    prompt_cache_key: z.string().optional(),
    safety_identifier: z.string().optional(),
  })
  .strict();

export type ChatRequestBody = z.infer<typeof chatRequestSchema>;
