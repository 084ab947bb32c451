/**
 * The Responses door's request (`POST /v1/responses`): OpenAI's Responses body translated into the one
 * internal chat request, which then goes through the shared pipeline to any target type. Unknown fields are
 * refused as OpenAI refuses them, and errors name the Responses field.
 *
 * | Responses                                   | internal (OpenAI chat)                                  |
 * | ------------------------------------------- | ------------------------------------------------------- |
 * | instructions                                | a system message, first (not carried to the next turn) |
 * | previous_response_id                        | the stored conversation of that response, before input |
 * | input string / message items                | messages (input_text, input_image, input_file parts)   |
 * | function_call items                         | assistant tool_calls (merged into one assistant turn)  |
 * | function_call_output items                  | tool messages                                           |
 * | item_reference                              | the stored output item it names, translated as above   |
 * | reasoning items                             | dropped: no target takes another model's reasoning     |
 * | max_output_tokens, temperature, top_p       | max_tokens, temperature, top_p                          |
 * | tools (function), tool_choice               | tools, tool_choice                                      |
 * | text.format (json_schema, json_object)      | response_format                                         |
 * | text.verbosity, reasoning.effort            | verbosity, reasoning_effort                             |
 * | top_logprobs                                | logprobs + top_logprobs                                 |
 * | user, service_tier, prompt_cache_*, safety_identifier | the same chat fields                          |
 * | store, metadata, truncation, include, max_tool_calls, reasoning.summary | the door's own (not sent upstream) |
 */
import { z } from 'zod';
import { parseChatRequest } from '../openai/chat-request.js';
import type { ChatMessage, ChatRequest, ContentPart, ReasoningEffort, ToolCall } from '../openai/chat-types.js';
import { invalidRequest } from '../openai/errors.js';
import { safeParseReporting, validationError } from '../openai/validation-errors.js';

const cacheBreakpoint = z.object({ mode: z.literal('explicit') }).strict().optional();
const inputText = z.object({ type: z.literal('input_text'), text: z.string(), prompt_cache_breakpoint: cacheBreakpoint }).strict();
const inputImage = z
  .object({
    type: z.literal('input_image'),
    image_url: z.string().min(1).nullable().optional(),
    file_id: z.string().nullable().optional(),
    detail: z.enum(['auto', 'low', 'high', 'original']).nullable().optional(),
    prompt_cache_breakpoint: cacheBreakpoint,
  })
  .strict();
const inputFile = z
  .object({
    type: z.literal('input_file'),
    file_data: z.string().min(1).optional(),
    filename: z.string().optional(),
    file_id: z.string().nullable().optional(),
    file_url: z.string().optional(),
    prompt_cache_breakpoint: cacheBreakpoint,
  })
  .strict();
const outputText = z
  .object({ type: z.literal('output_text'), text: z.string(), annotations: z.array(z.unknown()).optional(), logprobs: z.unknown().optional() })
  .strict();
const refusalPart = z.object({ type: z.literal('refusal'), refusal: z.string() }).strict();
const inputPart = z.discriminatedUnion('type', [inputText, inputImage, inputFile]);
const anyPart = z.discriminatedUnion('type', [inputText, inputImage, inputFile, outputText, refusalPart]);

const itemMeta = { id: z.string().nullable().optional(), status: z.enum(['in_progress', 'completed', 'incomplete']).nullable().optional() };
const messageItem = z
  .object({
    type: z.literal('message').optional(),
    role: z.enum(['user', 'assistant', 'system', 'developer']),
    content: z.union([z.string(), z.array(anyPart)]),
    // Vercel's AI SDK echoes the phase of GPT-5 answers back.
    phase: z.enum(['commentary', 'final_answer']).nullable().optional(),
    ...itemMeta,
  })
  .strict();
const functionCallItem = z
  .object({
    type: z.literal('function_call'),
    call_id: z.string().min(1),
    name: z.string().min(1),
    arguments: z.string(),
    namespace: z.string().nullable().optional(),
    ...itemMeta,
  })
  .strict();
const functionCallOutputItem = z
  .object({
    type: z.literal('function_call_output'),
    call_id: z.string().min(1),
    output: z.union([z.string(), z.array(inputPart)]),
    ...itemMeta,
  })
  .strict();
// Another model's reasoning is not something any target takes back: accepted and dropped.
const reasoningItem = z.object({ type: z.literal('reasoning') }).passthrough();
const itemReference = z.object({ type: z.literal('item_reference'), id: z.string().min(1) }).strict();

const typedItem = z.discriminatedUnion('type', [functionCallItem, functionCallOutputItem, reasoningItem, itemReference, messageItem.extend({ type: z.literal('message') })]);
// A message may leave out its `type` (OpenAI's EasyInputMessage): it is read as one, so errors name its fields.
const inputItem = z.preprocess(
  (v) => (typeof v === 'object' && v !== null && !('type' in v) && 'role' in v ? { type: 'message', ...v } : v),
  typedItem,
);
export type InputItem = z.infer<typeof typedItem>;

const functionTool = z
  .object({
    type: z.literal('function'),
    name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, underscores or dashes'),
    description: z.string().nullable().optional(),
    parameters: z.record(z.string(), z.unknown()).nullable().optional(),
    strict: z.boolean().nullable().optional(),
  })
  .strict();

const textFormat = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text') }).strict(),
  z.object({ type: z.literal('json_object') }).strict(),
  z
    .object({
      type: z.literal('json_schema'),
      name: z.string().min(1).max(64),
      schema: z.record(z.string(), z.unknown()),
      description: z.string().optional(),
      strict: z.boolean().nullable().optional(),
    })
    .strict(),
]);

const effort = z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh']);

export const responsesRequestSchema = z
  .object({
    model: z.string().min(1),
    input: z.union([z.string(), z.array(inputItem)]),
    instructions: z.string().nullable().optional(),
    previous_response_id: z.string().min(1).nullable().optional(),
    max_output_tokens: z.number().int().min(1).nullable().optional(),
    temperature: z.number().min(0).max(2).nullable().optional(),
    top_p: z.number().min(0).max(1).nullable().optional(),
    top_logprobs: z.number().int().min(0).max(20).nullable().optional(),
    tools: z.array(z.object({ type: z.string() }).passthrough()).max(128).optional(),
    tool_choice: z
      .union([z.enum(['none', 'auto', 'required']), z.object({ type: z.literal('function'), name: z.string().min(1) }).strict()])
      .optional(),
    parallel_tool_calls: z.boolean().nullable().optional(),
    max_tool_calls: z.number().int().min(1).nullable().optional(),
    text: z
      .object({ format: textFormat.nullable().optional(), verbosity: z.enum(['low', 'medium', 'high']).nullable().optional() })
      .strict()
      .nullable()
      .optional(),
    reasoning: z
      .object({
        effort: effort.nullable().optional(),
        summary: z.enum(['auto', 'concise', 'detailed']).nullable().optional(),
        generate_summary: z.enum(['auto', 'concise', 'detailed']).nullable().optional(),
      })
      .strict()
      .nullable()
      .optional(),
    stream: z.boolean().nullable().optional(),
    stream_options: z.object({ include_obfuscation: z.boolean().optional() }).strict().nullable().optional(),
    store: z.boolean().nullable().optional(),
    metadata: z.record(z.string().max(64), z.string().max(512)).nullable().optional(),
    user: z.string().max(256).optional(),
    service_tier: z.string().min(1).nullable().optional(),
    prompt_cache_key: z.string().nullable().optional(),
    prompt_cache_retention: z.enum(['in_memory', '24h']).nullable().optional(),
    safety_identifier: z.string().max(64).nullable().optional(),
    truncation: z.enum(['auto', 'disabled']).nullable().optional(),
    include: z.array(z.string()).nullable().optional(),
    background: z.boolean().nullable().optional(),
    // Refused unless null (parseResponsesRequest says why).
    conversation: z.unknown().optional(),
    prompt: z.unknown().optional(),
  })
  .strict();

export type ResponsesBody = z.infer<typeof responsesRequestSchema>;
type ValidTool = z.infer<typeof functionTool>;

/** What the door needs of the stored responses: an earlier conversation, and an earlier output item. */
export interface ResponsesHistory {
  /** The whole conversation (this response's answer included) of a stored response, or null. */
  conversation(responseId: string): Promise<ChatMessage[] | null>;
  /** A stored output item by its id, or null. */
  item(itemId: string): Promise<InputItem | null>;
}

export interface ParsedResponsesRequest {
  chat: ChatRequest;
  body: ResponsesBody;
  tools: ValidTool[];
  /** The conversation before this answer, without `instructions` (which apply to this response only). */
  conversation: ChatMessage[];
}

function unsupported(param: string, why: string): Error {
  return invalidRequest(`Unsupported parameter '${param}': ${why}.`, param, 'unsupported_parameter');
}

/** The Responses body -> the internal request. Throws GatewayError (400) naming the field. */
export async function parseResponsesRequest(raw: unknown, history: ResponsesHistory): Promise<ParsedResponsesRequest> {
  const parsed = safeParseReporting(responsesRequestSchema, raw);
  if (!parsed.success) throw validationError(parsed.error);
  const b = parsed.data;
  if (b.background === true) throw unsupported('background', 'background responses are not supported by this gateway; stream instead');
  if (b.conversation != null) throw unsupported('conversation', 'the Conversations API is not served by this gateway; send previous_response_id');
  if (b.prompt != null) throw unsupported('prompt', 'stored prompt templates are not served by this gateway');
  if (b.stream_options != null && b.stream !== true) {
    throw invalidRequest("The 'stream_options' parameter is only allowed when 'stream' is true.", 'stream_options');
  }
  const tools = (b.tools ?? []).map((t, i) => {
    if (t.type !== 'function') throw unsupported(`tools[${i}].type`, `the built-in tool '${t.type}' is not served by this gateway; only function tools are`);
    const tool = safeParseReporting(functionTool, t);
    if (!tool.success) throw validationError(tool.error, {}, ['tools', i]);
    return tool.data;
  });

  const conversation: ChatMessage[] = [];
  if (b.previous_response_id != null) {
    const earlier = await history.conversation(b.previous_response_id);
    if (earlier === null) {
      throw invalidRequest(`Previous response with id '${b.previous_response_id}' not found.`, 'previous_response_id', 'previous_response_not_found');
    }
    conversation.push(...earlier);
  }
  if (typeof b.input === 'string') conversation.push({ role: 'user', content: b.input });
  else {
    for (const [i, item] of b.input.entries()) {
      let resolved: InputItem | null = item;
      if (item.type === 'item_reference') {
        resolved = await history.item(item.id);
        if (resolved === null) throw invalidRequest(`Item with id '${item.id}' not found.`, `input[${i}].id`, 'item_not_found');
      }
      appendItem(conversation, resolved, `input[${i}]`);
    }
  }
  if (!conversation.some((m) => m.role !== 'system' && m.role !== 'developer')) {
    throw invalidRequest("'input' must contain at least one message.", 'input', 'empty_input');
  }

  const messages: ChatMessage[] = b.instructions ? [{ role: 'system', content: b.instructions }, ...conversation] : [...conversation];
  const chat: Record<string, unknown> = { model: b.model, messages, stream: b.stream ?? false };
  if (b.stream === true) chat.stream_options = { include_usage: true };
  if (b.max_output_tokens != null) chat.max_completion_tokens = b.max_output_tokens;
  if (b.temperature != null) chat.temperature = b.temperature;
  if (b.top_p != null) chat.top_p = b.top_p;
  if (b.top_logprobs != null && b.top_logprobs > 0) {
    chat.logprobs = true;
    chat.top_logprobs = b.top_logprobs;
  }
  if (tools.length > 0) {
    chat.tools = tools.map((t) => ({
      type: 'function',
      function: {
        name: t.name,
        ...(t.description != null ? { description: t.description } : {}),
        ...(t.parameters != null ? { parameters: t.parameters } : {}),
        ...(t.strict != null ? { strict: t.strict } : {}),
      },
    }));
    if (b.parallel_tool_calls != null) chat.parallel_tool_calls = b.parallel_tool_calls;
  }
  if (b.tool_choice !== undefined && (tools.length > 0 || typeof b.tool_choice === 'string')) {
    const choice = b.tool_choice;
    if (typeof choice === 'object' && !tools.some((t) => t.name === choice.name)) {
      throw invalidRequest("'tool_choice' names a function that is not in 'tools'.", 'tool_choice.name');
    }
    if (choice === 'required' && tools.length === 0) throw invalidRequest("'tool_choice' requires 'tools'.", 'tool_choice');
    chat.tool_choice = typeof choice === 'string' ? choice : { type: 'function', function: { name: choice.name } };
  }
  const format = b.text?.format;
  if (format != null && format.type !== 'text') {
    chat.response_format =
      format.type === 'json_object'
        ? { type: 'json_object' }
        : {
            type: 'json_schema',
            json_schema: {
              name: format.name,
              schema: format.schema,
              ...(format.description !== undefined ? { description: format.description } : {}),
              ...(format.strict != null ? { strict: format.strict } : {}),
            },
          };
  }
  if (b.text?.verbosity != null) chat.verbosity = b.text.verbosity;
  if (b.reasoning?.effort != null) chat.reasoning_effort = b.reasoning.effort satisfies ReasoningEffort;
  if (b.user !== undefined) chat.user = b.user;
  for (const field of ['service_tier', 'prompt_cache_key', 'prompt_cache_retention', 'safety_identifier'] as const) {
    if (b[field] != null) chat[field] = b[field];
  }
  return { chat: parseChatRequest(chat), body: b, tools, conversation };
}

function textOf(content: string | z.infer<typeof anyPart>[]): string {
  if (typeof content === 'string') return content;
  return content.map((p) => (p.type === 'input_text' || p.type === 'output_text' ? p.text : p.type === 'refusal' ? p.refusal : '')).join('');
}

function userPart(p: z.infer<typeof anyPart>, at: string): ContentPart {
  switch (p.type) {
    case 'input_text':
    case 'output_text':
      return { type: 'text', text: p.text };
    case 'refusal':
      return { type: 'text', text: p.refusal };
    case 'input_image': {
      if (p.image_url == null) throw unsupported(`${at}.file_id`, 'uploaded files are not served by this gateway; send image_url (a URL or a data: URL)');
      const detail = p.detail === 'low' || p.detail === 'high' ? p.detail : undefined;
      return { type: 'image_url', image_url: { url: p.image_url, ...(detail ? { detail } : {}) } };
    }
    case 'input_file': {
      if (p.file_data === undefined) {
        throw unsupported(p.file_url !== undefined ? `${at}.file_url` : `${at}.file_id`, 'send the file inline as file_data (a data: URL)');
      }
      return { type: 'file', file: { file_data: p.file_data, ...(p.filename !== undefined ? { filename: p.filename } : {}) } };
    }
  }
}

/** The last message, when it is an assistant turn that tool calls may still join. */
function openAssistant(conversation: ChatMessage[]): ChatMessage | null {
  const last = conversation.at(-1);
  return last?.role === 'assistant' ? last : null;
}

function appendItem(conversation: ChatMessage[], item: InputItem, at: string): void {
  switch (item.type) {
    case 'reasoning':
    case 'item_reference':
      return;
    case 'function_call': {
      const call: ToolCall = { id: item.call_id, type: 'function', function: { name: item.name, arguments: item.arguments } };
      const turn = openAssistant(conversation);
      if (turn !== null) turn.tool_calls = [...(turn.tool_calls ?? []), call];
      else conversation.push({ role: 'assistant', content: null, tool_calls: [call] });
      return;
    }
    case 'function_call_output': {
      const output = typeof item.output === 'string' ? item.output : textOf(item.output);
      conversation.push({ role: 'tool', tool_call_id: item.call_id, content: output });
      // Images a tool returned go to the model as the user's, where every target can see them.
      if (typeof item.output !== 'string') {
        const images = item.output.flatMap((p, j) => (p.type === 'input_text' ? [] : [userPart(p, `${at}.output[${j}]`)]));
        if (images.length > 0) conversation.push({ role: 'user', content: images });
      }
      return;
    }
    default: {
      if (item.role === 'assistant') {
        const text = textOf(item.content);
        const turn = openAssistant(conversation);
        // Two assistant items in a row (text, then more text) are one turn to a chat model.
        if (turn !== null && turn.tool_calls === undefined) turn.content = `${typeof turn.content === 'string' ? turn.content : ''}${text}`;
        else conversation.push({ role: 'assistant', content: text });
        return;
      }
      if (item.role === 'system' || item.role === 'developer') {
        conversation.push({ role: item.role, content: textOf(item.content) });
        return;
      }
      conversation.push({
        role: 'user',
        content: typeof item.content === 'string' ? item.content : item.content.map((p, j) => userPart(p, `${at}.content[${j}]`)),
      });
    }
  }
}
