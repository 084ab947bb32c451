/**
 * The limiter shared by every gateway instance: one round trip per decision, the script in
 * sliding-window-script.ts. The Redis client is passed in as a small structural interface (the Node
 * runtime wires ioredis, src/runtime/node/redis-client.ts), so this file stays runtime-neutral.
 *
 * When Redis cannot answer (down, unreachable, slower than the command timeout), the operator's
 * `rate_limits.on_redis_error` decides: `open` (the default) admits the request unlimited and logs a
 * warning (at most one line per 10 s, with the count of requests so admitted); `closed` refuses it with a
 * 503 `rate_limiter_unavailable` (Retry-After: 1). Never a 500.
 */
import type { Logger } from '../core/logger.js';
import { GatewayError } from '../openai/errors.js';
import { RATE_WINDOW_MS, windowStates, type RateDecision, type RateLimiter, type RateRequest } from './rate-limiter.js';

/** What the limiter needs of a Redis client: run the script (cached by its SHA) on two keys. */
export interface RateLimitScriptRunner {
  runRateLimitScript(keys: [string, string], args: (string | number)[]): Promise<unknown>;
  close(): Promise<void>;
}

export type RedisFailurePolicy = 'open' | 'closed';

const WARN_EVERY_MS = 10_000;

export class RedisRateLimiter implements RateLimiter {
  private seq = 0;
  private failuresSinceWarning = 0;
  private lastWarningAt = -Infinity;
  private readonly instance = Math.random().toString(36).slice(2, 10);

  constructor(
    private readonly redis: RateLimitScriptRunner,
    private readonly opts: { onError: RedisFailurePolicy; logger: Logger; prefix?: string; windowMs?: number },
  ) {}

  async admit({ keyId, limits, tokens }: RateRequest): Promise<RateDecision> {
    const prefix = this.opts.prefix ?? 'svc:rl';
    const windowMs = this.opts.windowMs ?? RATE_WINDOW_MS;
    this.seq += 1;
    let reply: unknown;
    try {
      reply = await this.redis.runRateLimitScript(
        [`${prefix}:{${keyId}}:log`, `${prefix}:{${keyId}}:tokens`],
        [limits.rpm ?? 0, limits.tpm ?? 0, tokens, windowMs, `${this.instance}.${this.seq}`],
      );
    } catch (e) {
      return this.unavailable(e);
    }
    if (!Array.isArray(reply) || reply.length !== 6 || !reply.every((v) => typeof v === 'number')) {
      return this.unavailable(new Error(`unexpected rate limit script reply: ${JSON.stringify(reply)}`));
    }
    const [allowed, count, sum, retryAfterMs, resetMs, tooLarge] = reply as number[];
    return {
      allowed: allowed === 1,
      ...windowStates(limits, count ?? 0, sum ?? 0, resetMs ?? 0),
      retryAfterMs: retryAfterMs ?? 0,
      tooLarge: tooLarge === 1,
    };
  }

  close(): Promise<void> {
    return this.redis.close();
  }

  private unavailable(error: unknown): RateDecision {
    this.failuresSinceWarning += 1;
    const now = performance.now();
    if (now - this.lastWarningAt >= WARN_EVERY_MS) {
      this.lastWarningAt = now;
      this.opts.logger.warn(
        this.opts.onError === 'open'
          ? 'rate limiter unreachable (Redis): admitting requests without rate limits (rate_limits.on_redis_error: open)'
          : 'rate limiter unreachable (Redis): refusing rate-limited requests with 503 (rate_limits.on_redis_error: closed)',
        { requests: this.failuresSinceWarning, error: String(error) },
      );
      this.failuresSinceWarning = 0;
    }
    if (this.opts.onError === 'closed') {
      throw new GatewayError(503, 'server_error', 'rate_limiter_unavailable', 'The rate limiter is unreachable right now. Retry shortly.', null, {
        'retry-after': '1',
      });
    }
    return { allowed: true, requests: null, tokens: null, retryAfterMs: 0, tooLarge: false };
  }
}
