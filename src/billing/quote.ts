/**
 * The worst case of a request, computed before the upstream call: estimated prompt tokens, the output
 * bound (the client's max_tokens or the alias default, never beyond the context window) and the credits
 * both could cost. The output bound is forwarded upstream, so the upstream cannot exceed what was held.
 *
 * Attachments (docs/attachments.md) give two prompt figures. The hold covers the most any target of the
 * route may count (failover may reach any of them); the context-window check uses the likely size at the
 * target that would count least, so that a real document of tens of pages is not refused on a bound
 * meant for money. A part of unknowable size is refused (400) unless the operator bounded it.
 */
import type { ChatRequest } from '../openai/chat-types.js';
import { invalidRequest } from '../openai/errors.js';
import type { CatalogEntry } from '../routing/catalog.js';
import { inspectMedia } from './media/media-facts.js';
import { estimateMediaByTarget, REFUSE_UNBOUNDED, targetKey, type MediaPolicy, type MediaTarget } from './media/media-estimate.js';
import { creditCost } from './pricing.js';
import { estimateTextPromptTokens } from './token-estimate.js';

export type { MediaPolicy, MediaTarget } from './media/media-estimate.js';

export interface Quote {
  /** Prompt tokens the hold covers: the text, plus the attachments at the target that may count most. */
  promptTokens: number;
  /** The likely prompt size at the target that would count least: what the context-window check uses. */
  likelyPromptTokens: number;
  /**
   * The held prompt estimate per target (`provider/model`): the estimate to charge when that target
   * served the request and reported no usage (see promptTokensFor).
   */
  promptTokensByTarget: Readonly<Record<string, number>>;
  /**
   * Targets (`provider/model`) that cannot bound the cost of this request's media (an image URL to a target
   * that bills whatever the URL holds): left out of its failover. Empty for most requests.
   */
  unservableTargets: readonly string[];
  maxOutputTokens: number;
  worstCaseCredits: number;
}

/** What the quote needs of a route (src/routing/router.ts `Route` satisfies it). */
export interface QuoteRoute {
  entry: CatalogEntry;
  defaultMaxTokens: number;
  targets: readonly MediaTarget[];
}

export async function quoteRequest(route: QuoteRoute, req: ChatRequest, policy: MediaPolicy = REFUSE_UNBOUNDED): Promise<Quote> {
  const text = estimateTextPromptTokens(req.messages, req.tools);
  const parts = await inspectMedia(req.messages);
  const byTarget: Record<string, number> = {};
  const unservableTargets: string[] = [];
  let promptTokens = text;
  let likelyPromptTokens = text;
  if (parts.length > 0 && route.targets.length > 0) {
    const media = estimateMediaByTarget(parts, route.targets, policy);
    let most = 0;
    let least = Infinity;
    for (const [key, r] of media) {
      if (r === null) {
        unservableTargets.push(key);
        continue;
      }
      byTarget[key] = text + r.upper;
      most = Math.max(most, r.upper);
      least = Math.min(least, r.likely);
    }
    promptTokens = text + most;
    likelyPromptTokens = text + least;
  } else {
    for (const t of route.targets) byTarget[targetKey(t)] = text;
  }

  const { entry } = route;
  const window = entry.contextWindow;
  if (likelyPromptTokens >= window) {
    throw invalidRequest(
      `This model's maximum context length is ${window} tokens; the messages are about ${likelyPromptTokens} tokens. Shorten the messages.`,
      'messages',
      'context_length_exceeded',
    );
  }
  let maxOutputTokens: number;
  if (req.max_tokens !== null) {
    if (likelyPromptTokens + req.max_tokens > window) {
      throw invalidRequest(
        `This model's maximum context length is ${window} tokens; the messages are about ${likelyPromptTokens} tokens and max_tokens asks for ${req.max_tokens} more. Lower max_tokens to at most ${window - likelyPromptTokens}.`,
        'max_tokens',
        'context_length_exceeded',
      );
    }
    maxOutputTokens = req.max_tokens;
  } else {
    maxOutputTokens = Math.min(route.defaultMaxTokens, window - likelyPromptTokens);
  }
  return {
    promptTokens,
    likelyPromptTokens,
    promptTokensByTarget: byTarget,
    unservableTargets,
    maxOutputTokens,
    worstCaseCredits: creditCost(entry, promptTokens, maxOutputTokens),
  };
}

/**
 * The prompt estimate for the target that served (`routed_provider`, `routed_model`), for charging when it
 * reported no usage; the held estimate when the target is not one of the route's.
 */
export function promptTokensFor(quote: Quote, provider: string, model: string): number {
  return quote.promptTokensByTarget[`${provider}/${model}`] ?? quote.promptTokens;
}
