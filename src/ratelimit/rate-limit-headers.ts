/**
 * The headers OpenAI sends with every answer and its clients read (x-ratelimit-*), and the 429 of a refused
 * request. Durations in OpenAI's format ("20ms", "1.5s", "1m0s").
 */
import { GatewayError } from '../openai/errors.js';
import type { RateDecision } from './rate-limiter.js';

export function formatDuration(ms: number): string {
  const whole = Math.max(0, Math.ceil(ms));
  if (whole < 1000) return `${whole}ms`;
  if (whole < 60_000) return `${Number((whole / 1000).toFixed(3))}s`;
  const minutes = Math.floor(whole / 60_000);
  return `${minutes}m${Number(((whole - minutes * 60_000) / 1000).toFixed(3))}s`;
}

/** Headers for the dimensions that have a limit; none when the key has no limit. */
export function rateLimitHeaders(d: RateDecision): Record<string, string> {
  const h: Record<string, string> = {};
  if (d.requests !== null) {
    h['x-ratelimit-limit-requests'] = String(d.requests.limit);
    h['x-ratelimit-remaining-requests'] = String(d.requests.remaining);
    h['x-ratelimit-reset-requests'] = formatDuration(d.requests.resetMs);
  }
  if (d.tokens !== null) {
    h['x-ratelimit-limit-tokens'] = String(d.tokens.limit);
    h['x-ratelimit-remaining-tokens'] = String(d.tokens.remaining);
    h['x-ratelimit-reset-tokens'] = formatDuration(d.tokens.resetMs);
  }
  return h;
}

/**
 * 429 `rate_limit_exceeded`. Retry-After in whole seconds (at least 1) and `retry-after-ms`, which the
 * OpenAI SDKs prefer. A request larger than the tpm limit by itself can never pass: no Retry-After, and
 * a message that says to lower max_tokens (OpenAI answers it the same way, 429 "Request too large").
 */
export function rateLimitError(d: RateDecision, tokens: number): GatewayError {
  const headers = rateLimitHeaders(d);
  if (d.tooLarge) {
    return new GatewayError(
      429,
      'rate_limit_error',
      'rate_limit_exceeded',
      `Request too large: it counts ${tokens} tokens (prompt estimate + max_tokens) and this key's limit is ` +
        `${d.tokens?.limit ?? 0} tokens per minute. Lower max_tokens or shorten the messages.`,
      null,
      headers,
    );
  }
  const which = d.requests !== null && d.requests.remaining === 0 ? 'requests' : 'tokens';
  const limit = which === 'requests' ? `${d.requests?.limit ?? 0} requests` : `${d.tokens?.limit ?? 0} tokens`;
  const wait = Math.max(1, Math.ceil(d.retryAfterMs));
  return new GatewayError(
    429,
    'rate_limit_error',
    'rate_limit_exceeded',
    `Rate limit reached for this API key: ${limit} per minute. Retry in ${formatDuration(wait)}.`,
    null,
    { ...headers, 'retry-after': String(Math.ceil(wait / 1000)), 'retry-after-ms': String(wait) },
  );
}
