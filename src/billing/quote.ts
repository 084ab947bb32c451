/**
 * The worst case of a request, computed before the upstream call: estimated prompt tokens, the output
 * bound (the client's max_tokens or the alias default, never beyond the context window) and the credits
 * both could cost. The output bound is forwarded upstream, so the upstream cannot exceed what was held.
 */
import type { ChatRequest } from '../openai/chat-types.js';
import { invalidRequest } from '../openai/errors.js';
import type { CatalogEntry } from '../routing/catalog.js';
import { creditCost } from './pricing.js';
import { estimatePromptTokens } from './token-estimate.js';

export interface Quote {
  promptTokens: number;
  maxOutputTokens: number;
  worstCaseCredits: number;
}

export function quoteRequest(entry: CatalogEntry, defaultMaxTokens: number, req: ChatRequest): Quote {
  const promptTokens = estimatePromptTokens(req.messages, req.tools);
  const window = entry.contextWindow;
  if (promptTokens >= window) {
    throw invalidRequest(
      `This model's maximum context length is ${window} tokens; the messages are about ${promptTokens} tokens. Shorten the messages.`,
      'messages',
      'context_length_exceeded',
    );
  }
  let maxOutputTokens: number;
  if (req.max_tokens !== null) {
    if (promptTokens + req.max_tokens > window) {
      throw invalidRequest(
        `This model's maximum context length is ${window} tokens; the messages are about ${promptTokens} tokens and max_tokens asks for ${req.max_tokens} more. Lower max_tokens to at most ${window - promptTokens}.`,
        'max_tokens',
        'context_length_exceeded',
      );
    }
    maxOutputTokens = req.max_tokens;
  } else {
    maxOutputTokens = Math.min(defaultMaxTokens, window - promptTokens);
  }
  return { promptTokens, maxOutputTokens, worstCaseCredits: creditCost(entry, promptTokens, maxOutputTokens) };
}
