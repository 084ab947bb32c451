/**
 * The rate-limit step of a completion, between the quote and the credit hold: a refused request is
 * answered 429 before it can hold credits. Nothing is asked of the limiter for a key without limits.
 */
import type { ApiKeyRecord } from '../store/types.js';
import { rateLimitError, rateLimitHeaders } from './rate-limit-headers.js';
import { limitsFor, type RateLimiter, type RateLimits } from './rate-limiter.js';

export interface RateLimiting {
  limiter: RateLimiter;
  /** `rate_limits.rpm` / `.tpm` of the configuration: the limits of a key that has none of its own. */
  defaults: RateLimits;
}

/** Admits the request or throws the 429; answers the x-ratelimit-* headers for the response. */
export async function admitRate(
  rate: RateLimiting,
  key: ApiKeyRecord,
  quote: { promptTokens: number; maxOutputTokens: number },
): Promise<Record<string, string>> {
  const limits = limitsFor(key, rate.defaults);
  if (limits.rpm === null && limits.tpm === null) return {};
  const tokens = quote.promptTokens + quote.maxOutputTokens;
  const decision = await rate.limiter.admit({ keyId: key.id, limits, tokens });
  if (!decision.allowed) throw rateLimitError(decision, tokens);
  return rateLimitHeaders(decision);
}
