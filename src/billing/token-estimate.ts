/**
 * Prompt-size estimation before the upstream call, for the reservation and the context-window check.
 * Why bytes/3: byte-level BPE tokenizers average about 4 bytes per token on English and about 3 on code
 * and on CJK text (3 bytes per character); dividing by 3 over-estimates slightly on most text, so a hold
 * rarely falls short of the upstream's own count. Running a real tokenizer would cost hundreds of
 * microseconds per 4 KB prompt on the hot path and would still be wrong for non-OpenAI upstreams.
 * Attachments are not text: their tokens follow each provider's own rules (./media/, docs/attachments.md).
 */
import type { ChatMessage, FunctionTool } from '../openai/chat-types.js';
import { inspectMediaSync } from './media/media-facts.js';
import { estimateMedia, REFUSE_UNBOUNDED } from './media/media-estimate.js';
import { openAIRules } from './media/openai-rules.js';

const encoder = new TextEncoder();
/** OpenAI's documented per-message framing overhead, and the reply primer. */
const PER_MESSAGE = 4;
const REPLY_PRIMER = 3;

export function estimateTextTokens(text: string): number {
  if (text.length === 0) return 0;
  // Fast path: pure ASCII strings have one byte per UTF-16 unit, so no encoding is needed.
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) > 0x7f) {
      bytes = encoder.encode(text).length;
      break;
    }
  }
  return Math.ceil(bytes / 3);
}

/** Text, names, tool calls, tool definitions and framing: everything but the attachments. */
export function estimateTextPromptTokens(messages: readonly ChatMessage[], tools?: readonly FunctionTool[]): number {
  let total = REPLY_PRIMER;
  for (const m of messages) {
    total += PER_MESSAGE;
    if (m.name) total += estimateTextTokens(m.name);
    const c = m.content;
    if (typeof c === 'string') {
      total += estimateTextTokens(c);
    } else if (c) {
      for (const part of c) {
        if (part.type === 'text') total += estimateTextTokens(part.text);
        else if (part.type === 'refusal') total += estimateTextTokens(part.refusal);
      }
    }
    if (m.tool_calls) {
      for (const call of m.tool_calls) {
        total += estimateTextTokens(call.function.name) + estimateTextTokens(call.function.arguments) + 3;
      }
    }
  }
  if (tools && tools.length > 0) total += estimateTextTokens(JSON.stringify(tools));
  return total;
}

const SANDBOX_RULES = openAIRules('sandbox');

/**
 * The prompt as an OpenAI-compatible server would likely count it, attachments included (by OpenAI's
 * general rules, without inflating PDF object streams): the sandbox reports this as its usage. Parts of
 * unknowable size (media URLs) count nothing here; the quote is what refuses or bounds them.
 */
export function estimatePromptTokens(messages: readonly ChatMessage[], tools?: readonly FunctionTool[]): number {
  const text = estimateTextPromptTokens(messages, tools);
  const parts = inspectMediaSync(messages).filter((p) => SANDBOX_RULES.estimate(p.fact) !== null);
  return parts.length === 0 ? text : text + estimateMedia(parts, SANDBOX_RULES, 'sandbox', REFUSE_UNBOUNDED).likely;
}

/**
 * Completion tokens actually delivered when the upstream reported no usage (a client hung up, or the
 * upstream omits usage): at least one token per non-empty delta, and about 4 bytes per token of text.
 * Deliberately lower than the prompt estimate: here the gateway must not charge for more than was sent.
 */
export function estimateDeliveredTokens(text: string, deltas: number): number {
  const byBytes = Math.ceil(estimateTextTokens(text) * 0.75);
  return Math.max(byBytes, text.length > 0 ? deltas : 0);
}
