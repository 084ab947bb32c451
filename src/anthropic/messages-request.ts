/**
 * The Anthropic Messages door's request (`POST /v1/messages`): Anthropic's body translated into the one
 * internal chat request, which then goes through the shared pipeline to any target type. The body is checked
 * as Anthropic checks it (unknown fields refused, `max_tokens` required) and errors name the field.
 *
 * | Anthropic                                | internal (OpenAI chat)                                           |
 * | ---------------------------------------- | ---------------------------------------------------------------- |
 * | system (string or text blocks)           | a system message                                                 |
 * | text / image (base64, url) / document    | text / image_url (data: URL or URL) / file (PDF data: URL) parts |
 * | assistant tool_use                       | assistant tool_calls (input as JSON arguments)                   |
 * | user tool_result                         | a tool message per result, before the user's other blocks        |
 * | thinking / redacted_thinking in history  | dropped: the next turn needs none of it on the internal request  |
 * | tools, tool_choice auto/any/tool/none    | tools, tool_choice auto/required/named/none                      |
 * | disable_parallel_tool_use                | parallel_tool_calls: false                                       |
 * | max_tokens, stop_sequences, temperature, top_p | max_tokens, stop, temperature, top_p                       |
 * | top_k                                    | dropped: no OpenAI equivalent (a sampling nudge)                 |
 * | thinking enabled (budget_tokens)         | reasoning_effort by the budget's share of max_tokens             |
 * | thinking disabled / adaptive             | reasoning_effort none / medium                                   |
 * | images in a tool_result                  | image parts of the user message that follows the tool messages   |
 * | metadata.user_id                         | user                                                             |
 * | cache_control on blocks                  | dropped (the gateway's Anthropic targets cache by prefix anyway) |
 */
import { z } from 'zod';
import { parseChatRequest } from '../openai/chat-request.js';
import { MAX_STOP_SEQUENCES } from '../openai/chat-request-schema.js';
import { invalidRequest } from '../openai/errors.js';
import type { ChatMessage, ChatRequest, ContentPart, ReasoningEffort } from '../openai/chat-types.js';
import { EFFORT_SHARE } from '../providers/reasoning-effort.js';
import { safeParseReporting, validationError } from '../openai/validation-errors.js';

const cacheControl = z.object({ type: z.literal('ephemeral'), ttl: z.string().optional() }).strict().nullable().optional();
const textBlock = z.object({ type: z.literal('text'), text: z.string(), cache_control: cacheControl, citations: z.unknown().optional() }).strict();
const imageBlock = z
  .object({
    type: z.literal('image'),
    source: z.discriminatedUnion('type', [
      z.object({ type: z.literal('base64'), media_type: z.string().min(1), data: z.string().min(1) }).strict(),
      z.object({ type: z.literal('url'), url: z.string().min(1) }).strict(),
    ]),
    cache_control: cacheControl,
  })
  .strict();
const documentBlock = z
  .object({
    type: z.literal('document'),
    source: z.object({ type: z.literal('base64'), media_type: z.literal('application/pdf'), data: z.string().min(1) }).strict(),
    title: z.string().nullable().optional(),
    context: z.string().nullable().optional(),
    citations: z.unknown().optional(),
    cache_control: cacheControl,
  })
  .strict();
const toolUseBlock = z
  .object({ type: z.literal('tool_use'), id: z.string().min(1), name: z.string().min(1), input: z.record(z.string(), z.unknown()), cache_control: cacheControl })
  .strict();
const toolResultBlock = z
  .object({
    type: z.literal('tool_result'),
    tool_use_id: z.string().min(1),
    content: z.union([z.string(), z.array(z.union([textBlock, imageBlock]))]).optional(),
    is_error: z.boolean().optional(),
    cache_control: cacheControl,
  })
  .strict();
const thinkingBlock = z.object({ type: z.literal('thinking'), thinking: z.string(), signature: z.string().optional() }).strict();
const redactedThinkingBlock = z.object({ type: z.literal('redacted_thinking'), data: z.string() }).strict();
const block = z.discriminatedUnion('type', [textBlock, imageBlock, documentBlock, toolUseBlock, toolResultBlock, thinkingBlock, redactedThinkingBlock]);
type Block = z.infer<typeof block>;

const messageSchema = z.object({ role: z.enum(['user', 'assistant']), content: z.union([z.string(), z.array(block)]) }).strict();

const toolSchema = z
  .object({
    // The internal request's (OpenAI's) rule, checked here so that a refusal names the door's own field.
    name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, underscores or dashes'),
    description: z.string().optional(),
    input_schema: z.record(z.string(), z.unknown()),
    type: z.literal('custom').optional(),
    cache_control: cacheControl,
  })
  .strict();

const toolChoiceSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('auto'), disable_parallel_tool_use: z.boolean().optional() }).strict(),
  z.object({ type: z.literal('any'), disable_parallel_tool_use: z.boolean().optional() }).strict(),
  z.object({ type: z.literal('tool'), name: z.string().min(1), disable_parallel_tool_use: z.boolean().optional() }).strict(),
  z.object({ type: z.literal('none') }).strict(),
]);

export const messagesRequestSchema = z
  .object({
    model: z.string().min(1),
    max_tokens: z.number().int().min(1),
    messages: z.array(messageSchema).min(1),
    system: z.union([z.string(), z.array(textBlock)]).optional(),
    stop_sequences: z.array(z.string()).max(MAX_STOP_SEQUENCES).optional(),
    stream: z.boolean().optional(),
    temperature: z.number().min(0).max(1).optional(),
    top_p: z.number().min(0).max(1).optional(),
    top_k: z.number().int().min(0).optional(),
    tools: z.array(toolSchema).optional(),
    tool_choice: toolChoiceSchema.optional(),
    thinking: z
      .discriminatedUnion('type', [
        z.object({ type: z.literal('enabled'), budget_tokens: z.number().int().min(1024) }).strict(),
        z.object({ type: z.literal('disabled') }).strict(),
        // The model decides how much to think (newer Claude models): a medium effort elsewhere.
        z.object({ type: z.literal('adaptive') }).strict(),
      ])
      .optional(),
    metadata: z.object({ user_id: z.string().max(256).nullable().optional() }).strict().optional(),
    service_tier: z.enum(['auto', 'standard_only']).optional(),
  })
  .strict();

export type MessagesRequestBody = z.infer<typeof messagesRequestSchema>;

/** Anthropic's body -> the internal request. Throws GatewayError (400) naming the field. */
export function parseMessagesRequest(body: unknown): ChatRequest {
  const parsed = safeParseReporting(messagesRequestSchema, body);
  if (!parsed.success) throw validationError(parsed.error);
  const b = parsed.data;
  if (b.thinking?.type === 'enabled' && b.thinking.budget_tokens >= b.max_tokens) {
    throw invalidRequest('`max_tokens` must be greater than `thinking.budget_tokens`.', 'thinking.budget_tokens');
  }
  const messages: ChatMessage[] = [];
  if (b.system !== undefined) {
    const system = typeof b.system === 'string' ? b.system : b.system.map((t) => t.text).join('\n\n');
    if (system.length > 0) messages.push({ role: 'system', content: system });
  }
  for (const m of b.messages) messages.push(...(m.role === 'user' ? userTurn(m.content) : [assistantTurn(m.content)]));
  const chat: Record<string, unknown> = { model: b.model, messages, max_tokens: b.max_tokens, stream: b.stream ?? false };
  if (b.stream === true) chat.stream_options = { include_usage: true };
  if (b.stop_sequences !== undefined) chat.stop = b.stop_sequences;
  if (b.temperature !== undefined) chat.temperature = b.temperature;
  if (b.top_p !== undefined) chat.top_p = b.top_p;
  if (b.metadata?.user_id != null) chat.user = b.metadata.user_id;
  if (b.tools !== undefined && b.tools.length > 0) {
    chat.tools = b.tools.map((t) => ({
      type: 'function',
      function: { name: t.name, ...(t.description !== undefined ? { description: t.description } : {}), parameters: t.input_schema },
    }));
  }
  const choice = b.tool_choice;
  if (choice !== undefined && (b.tools?.length ?? 0) > 0) {
    chat.tool_choice = choice.type === 'auto' ? 'auto' : choice.type === 'any' ? 'required' : choice.type === 'none' ? 'none' : { type: 'function', function: { name: choice.name } };
    if (choice.type !== 'none' && choice.disable_parallel_tool_use === true) chat.parallel_tool_calls = false;
  }
  if (b.thinking !== undefined) {
    chat.reasoning_effort =
      b.thinking.type === 'disabled' ? 'none' : b.thinking.type === 'adaptive' ? 'medium' : effortOf(b.thinking.budget_tokens, b.max_tokens);
  }
  return parseChatRequest(chat);
}

/** The effort whose share of the output bound (../providers/reasoning-effort.ts) is nearest the budget's. */
function effortOf(budget: number, maxTokens: number): ReasoningEffort {
  const share = Math.min(1, budget / maxTokens);
  let best: ReasoningEffort = 'medium';
  for (const [effort, s] of Object.entries(EFFORT_SHARE) as [ReasoningEffort, number][]) {
    if (effort === 'none') continue;
    if (Math.abs(s - share) < Math.abs(EFFORT_SHARE[best] - share)) best = effort;
  }
  return best;
}

/** A user turn: its tool results first (each its own tool message), then the rest as one user message. */
function userTurn(content: string | Block[]): ChatMessage[] {
  if (typeof content === 'string') return [{ role: 'user', content }];
  const out: ChatMessage[] = [];
  const parts: ContentPart[] = [];
  // Images a tool returned (a screenshot): a tool message carries text only, so they follow the results as
  // the user's, first in the user message, where every target can see them.
  const toolImages: ContentPart[] = [];
  for (const b of content) {
    if (b.type === 'tool_result') {
      const blocks = typeof b.content === 'string' ? [] : (b.content ?? []);
      const text = typeof b.content === 'string' ? b.content : blocks.map((c) => (c.type === 'text' ? c.text : '')).join('');
      out.push({ role: 'tool', tool_call_id: b.tool_use_id, content: b.is_error === true ? `Error: ${text}` : text });
      for (const c of blocks) if (c.type === 'image') toolImages.push(partOf(c) as ContentPart);
    } else {
      const part = partOf(b);
      if (part !== null) parts.push(part);
    }
  }
  if (toolImages.length > 0 || parts.length > 0) out.push({ role: 'user', content: [...toolImages, ...parts] });
  return out;
}

function assistantTurn(content: string | Block[]): ChatMessage {
  if (typeof content === 'string') return { role: 'assistant', content };
  const text = content.map((b) => (b.type === 'text' ? b.text : '')).join('');
  const calls = content.flatMap((b) =>
    b.type === 'tool_use' ? [{ id: b.id, type: 'function' as const, function: { name: b.name, arguments: JSON.stringify(b.input) } }] : [],
  );
  const out: ChatMessage = { role: 'assistant', content: text.length > 0 || calls.length === 0 ? text : null };
  if (calls.length > 0) out.tool_calls = calls;
  return out;
}

function partOf(b: Block): ContentPart | null {
  switch (b.type) {
    case 'text':
      return { type: 'text', text: b.text };
    case 'image':
      return { type: 'image_url', image_url: { url: b.source.type === 'base64' ? `data:${b.source.media_type};base64,${b.source.data}` : b.source.url } };
    case 'document':
      return { type: 'file', file: { file_data: `data:application/pdf;base64,${b.source.data}`, ...(b.title ? { filename: b.title } : {}) } };
    default:
      // thinking blocks and tool_use have no place in a user turn; earlier thinking is not carried.
      return null;
  }
}
