/**
 * The `usage` object both output paths report, from the settlement: OpenAI's shape, details included (its
 * own answers always carry them, and clients such as the Vercel AI SDK read cached and reasoning tokens
 * from there). The counts are those the charge was computed from.
 */
import type { TokenUsage } from '../openai/chat-types.js';
import type { Settlement } from './completion.js';

export function tokenUsage(s: Settlement): TokenUsage {
  return {
    prompt_tokens: s.promptTokens,
    completion_tokens: s.completionTokens,
    total_tokens: s.promptTokens + s.completionTokens,
    prompt_tokens_details: { cached_tokens: s.cachedTokens },
    completion_tokens_details: { reasoning_tokens: s.reasoningTokens },
  };
}
