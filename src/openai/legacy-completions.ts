/**
 * The legacy completions door (`POST /v1/completions`, OpenAI's `text_completion`), which LlamaIndex's
 * `OpenAILike` and older tools post to by default. A door is a translation at the edge: the body becomes a
 * chat request (the prompt as the one user message) and the answer is served by the alias's chat targets,
 * with the same metering, routing and failover; the answer is rendered back in the legacy shape.
 *
 * Decisions (docs/api.md, "POST /v1/completions"):
 * - `max_tokens` defaults to 16, as OpenAI's does: a client that sets none gets what it would get there.
 * - One prompt per request, as text: a list of several prompts, token-id prompts, `suffix`, `echo: true`
 *   and `best_of` > 1 are refused (400 unsupported_value), as chat targets cannot honour them.
 * - `logprobs: k` asks the target for logprobs with k alternatives, rendered in the legacy form (tokens,
 *   token_logprobs, top_logprobs, text_offset); a target without logprobs cannot serve it.
 */
import { z } from 'zod';
import { parseChatRequest } from './chat-request.js';
import type { ChatCompletion, ChatRequest, ChoiceLogprobs, FinishReason, SvcMetadata, TokenUsage } from './chat-types.js';
import { invalidRequest } from './errors.js';
import { safeParseReporting, validationError } from './validation-errors.js';

/** OpenAI's default output bound for this endpoint. */
export const LEGACY_DEFAULT_MAX_TOKENS = 16;

const legacySchema = z
  .object({
    model: z.string().min(1),
    prompt: z.union([z.string(), z.array(z.string()), z.array(z.number()), z.array(z.array(z.number()))]),
    suffix: z.string().nullable().optional(),
    max_tokens: z.number().int().min(1).nullable().optional(),
    temperature: z.number().nullable().optional(),
    top_p: z.number().nullable().optional(),
    n: z.number().int().min(1).nullable().optional(),
    stream: z.boolean().nullable().optional(),
    stream_options: z.object({ include_usage: z.boolean().optional(), include_obfuscation: z.boolean().optional() }).strict().nullable().optional(),
    logprobs: z.number().int().min(0).max(5).nullable().optional(),
    echo: z.boolean().nullable().optional(),
    stop: z.union([z.string(), z.array(z.string())]).nullable().optional(),
    presence_penalty: z.number().nullable().optional(),
    frequency_penalty: z.number().nullable().optional(),
    best_of: z.number().int().min(1).nullable().optional(),
    logit_bias: z.record(z.string(), z.number()).nullable().optional(),
    user: z.string().optional(),
    seed: z.number().int().nullable().optional(),
  })
  .strict();

/** The legacy body as the chat request that serves it. Throws GatewayError (400). */
export function parseLegacyRequest(body: unknown): ChatRequest {
  const parsed = safeParseReporting(legacySchema, body);
  if (!parsed.success) throw validationError(parsed.error);
  const b = parsed.data;
  const prompt = typeof b.prompt === 'string' ? b.prompt : b.prompt.length === 1 && typeof b.prompt[0] === 'string' ? b.prompt[0] : null;
  if (prompt === null) {
    throw invalidRequest('One text prompt per request: send a string (token ids and lists of prompts are not supported).', 'prompt', 'unsupported_value');
  }
  if (prompt.length === 0) throw invalidRequest("'prompt' is empty.", 'prompt');
  if (b.suffix != null && b.suffix !== '') throw invalidRequest("'suffix' (insertion) is not supported by this gateway's chat targets.", 'suffix', 'unsupported_value');
  if (b.echo === true) throw invalidRequest("'echo' is not supported: the prompt is not repeated in the answer.", 'echo', 'unsupported_value');
  if (b.best_of != null && b.best_of > 1) throw invalidRequest('Only best_of=1 is supported.', 'best_of', 'unsupported_value');
  const chat: Record<string, unknown> = {
    model: b.model,
    messages: [{ role: 'user', content: prompt }],
    max_tokens: b.max_tokens ?? LEGACY_DEFAULT_MAX_TOKENS,
  };
  for (const field of ['temperature', 'top_p', 'n', 'stream', 'stream_options', 'stop', 'presence_penalty', 'frequency_penalty', 'logit_bias', 'user', 'seed'] as const) {
    if (b[field] !== undefined) chat[field] = b[field];
  }
  if (b.logprobs != null) {
    chat.logprobs = true;
    chat.top_logprobs = b.logprobs;
  }
  return parseChatRequest(chat);
}

/** `choices[].logprobs` in the legacy form. */
export interface LegacyLogprobs {
  tokens: string[];
  token_logprobs: number[];
  top_logprobs: Record<string, number>[] | null;
  text_offset: number[];
}

export interface TextCompletion {
  id: string;
  object: 'text_completion';
  created: number;
  model: string;
  system_fingerprint?: string | null;
  choices: { text: string; index: number; logprobs: LegacyLogprobs | null; finish_reason: FinishReason | null }[];
  usage?: TokenUsage | null;
  svc?: SvcMetadata;
}

/** Chat logprobs -> legacy logprobs; `offset`: where the text they cover starts in the answer. */
export function legacyLogprobs(logprobs: ChoiceLogprobs | null | undefined, offset = 0): LegacyLogprobs | null {
  const content = logprobs?.content;
  if (!content) return null;
  const out: LegacyLogprobs = { tokens: [], token_logprobs: [], top_logprobs: [], text_offset: [] };
  let at = offset;
  for (const t of content) {
    out.tokens.push(t.token);
    out.token_logprobs.push(t.logprob);
    out.top_logprobs?.push(Object.fromEntries(t.top_logprobs.map((alt) => [alt.token, alt.logprob])));
    out.text_offset.push(at);
    at += t.token.length;
  }
  return out;
}

/** A chat completion in the legacy shape (the id keeps its own `cmpl-` prefix, from the door). */
export function renderTextCompletion(answer: ChatCompletion): TextCompletion {
  const choice = answer.choices[0];
  const out: TextCompletion = {
    id: answer.id,
    object: 'text_completion',
    created: answer.created,
    model: answer.model,
    choices: [{ text: choice?.message.content ?? '', index: 0, logprobs: legacyLogprobs(choice?.logprobs), finish_reason: choice?.finish_reason ?? 'stop' }],
    usage: answer.usage,
    svc: answer.svc,
  };
  if (answer.system_fingerprint !== undefined) out.system_fingerprint = answer.system_fingerprint;
  return out;
}
