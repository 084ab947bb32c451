/**
 * Per-key rate limits: requests per minute and tokens per minute over a sliding window of 60 s. A limiter
 * decides one request at a time and records it when admitted; two implementations, the same semantics:
 * in one process (sliding-window.ts, exact because JS runs one decision at a time) and shared by every
 * instance through Redis (redis-limiter.ts, one atomic Lua script per decision). docs/rate-limits.md.
 */

/** A key's limits in force (its own, else the configured default); null: that dimension is unlimited. */
export interface RateLimits {
  rpm: number | null;
  tpm: number | null;
}

export interface RateRequest {
  keyId: string;
  limits: RateLimits;
  /** What the request counts against tpm: its prompt estimate plus its output bound (the quote). */
  tokens: number;
  /**
   * The key's ancestors that have limits (a key created through the API by a limited key is its child,
   * docs/api.md "Key families"): the request counts in each one's window too, and is admitted only if every
   * window admits it, in one atomic step, so that minting keys cannot multiply a rate limit.
   */
  ancestors?: readonly { keyId: string; limits: RateLimits }[];
  /** The family's root key id: every window of one family in one Redis Cluster slot. Default: keyId. */
  familyId?: string;
}

/** One window's verdict, before the decision is put together (shared by both limiters). */
export interface WindowVerdict {
  limits: RateLimits;
  ok: boolean;
  tooLarge: boolean;
  /** Refused: ms until this window would admit the request; 0 otherwise. */
  retryAfterMs: number;
  /** After the decision (the request counted if admitted). */
  count: number;
  tokens: number;
  resetMs: number;
}

/**
 * The decision over every window of the request: admitted if all admit. Each dimension's headers speak for
 * the window that binds it: the fewest requests (or tokens) left among the windows limiting it. A refused
 * request waits for the slowest window, and a request too large for any window's tpm can never pass.
 */
export function decideOver(verdicts: readonly WindowVerdict[]): RateDecision {
  const allowed = verdicts.every((v) => v.ok);
  const tooLarge = verdicts.some((v) => v.tooLarge);
  let requests: WindowState | null = null;
  let tokens: WindowState | null = null;
  for (const v of verdicts) {
    const states = windowStates(v.limits, v.count, v.tokens, v.resetMs);
    if (states.requests !== null && (requests === null || states.requests.remaining < requests.remaining)) requests = states.requests;
    if (states.tokens !== null && (tokens === null || states.tokens.remaining < tokens.remaining)) tokens = states.tokens;
  }
  return {
    allowed,
    requests,
    tokens,
    retryAfterMs: allowed || tooLarge ? 0 : Math.max(...verdicts.map((v) => v.retryAfterMs)),
    tooLarge,
  };
}

/** One dimension after the decision, for the x-ratelimit-* headers. */
export interface WindowState {
  limit: number;
  remaining: number;
  /** Until the window holds nothing (back to its initial state, OpenAI's meaning of "reset"). */
  resetMs: number;
}

export interface RateDecision {
  allowed: boolean;
  /** Null when that dimension has no limit. */
  requests: WindowState | null;
  tokens: WindowState | null;
  /** Refused: how long until this same request would be admitted (0 when admitted or when it never can be). */
  retryAfterMs: number;
  /** Refused because the request alone counts more tokens than the tpm limit: waiting cannot help. */
  tooLarge: boolean;
}

export interface RateLimiter {
  /** Decides and, when admitted, records the request. Rejects only when a shared backend is unreachable. */
  admit(request: RateRequest): Promise<RateDecision>;
  close(): Promise<void>;
}

/** The window of both limits: "per minute" is any 60 s, not a calendar minute. */
export const RATE_WINDOW_MS = 60_000;

/** The key's own limits, else the account-wide default of the configuration. */
export function limitsFor(key: { rpmLimit: number | null; tpmLimit: number | null }, defaults: RateLimits): RateLimits {
  return { rpm: key.rpmLimit ?? defaults.rpm, tpm: key.tpmLimit ?? defaults.tpm };
}

/** Decision arithmetic shared by the in-process limiter and the reading of the Lua script's answer. */
export function windowStates(
  limits: RateLimits,
  count: number,
  tokens: number,
  resetMs: number,
): Pick<RateDecision, 'requests' | 'tokens'> {
  return {
    requests: limits.rpm === null ? null : { limit: limits.rpm, remaining: Math.max(0, limits.rpm - count), resetMs },
    tokens: limits.tpm === null ? null : { limit: limits.tpm, remaining: Math.max(0, limits.tpm - tokens), resetMs },
  };
}
