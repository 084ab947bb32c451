/**
 * The limiter shared by every gateway instance: one round trip per decision, the script in
 * sliding-window-script.ts. The Redis client is passed in as a small structural interface (the Node
 * runtime wires ioredis, src/runtime/node/redis-client.ts), so this file stays runtime-neutral.
 *
 * When Redis cannot answer (down, unreachable, slower than the command timeout), the operator's
 * `rate_limits.on_redis_error` decides: `open` (the default) decides the request by this instance's own
 * windows (the in-process limiter: each instance then enforces the limits alone, so a key may get up to
 * N times its limit over N instances, never unlimited) and logs a warning (at most one line per 10 s, with
 * the count of requests so decided); `closed` refuses it with a 503 `rate_limiter_unavailable`
 * (Retry-After: 1). Never a 500. Each such request is counted (`onFallback`, svc_rate_limiter_fallbacks_total).
 */
import type { Logger } from '../core/logger.js';
import { GatewayError } from '../openai/errors.js';
import { RATE_WINDOW_MS, decideOver, type RateDecision, type RateLimiter, type RateRequest, type WindowVerdict } from './rate-limiter.js';

/** What the limiter needs of a Redis client: run the script (cached by its SHA) on two keys per window. */
export interface RateLimitScriptRunner {
  runRateLimitScript(keys: readonly string[], args: (string | number)[]): Promise<unknown>;
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
    private readonly opts: {
      onError: RedisFailurePolicy;
      logger: Logger;
      /** Decides for this instance alone while Redis is away (`open`). */
      fallback: RateLimiter;
      /** Called once per request decided without Redis. */
      onFallback?: (policy: RedisFailurePolicy) => void;
      prefix?: string;
      windowMs?: number;
    },
  ) {}

  async admit(request: RateRequest): Promise<RateDecision> {
    const { keyId, limits, tokens, ancestors = [], familyId } = request;
    const prefix = this.opts.prefix ?? 'svc:rl';
    const windowMs = this.opts.windowMs ?? RATE_WINDOW_MS;
    const windows = [{ keyId, limits }, ...ancestors].filter((w) => w.limits.rpm !== null || w.limits.tpm !== null);
    if (windows.length === 0) return { allowed: true, requests: null, tokens: null, retryAfterMs: 0, tooLarge: false };
    // One hash tag for the whole family: one Redis Cluster slot, so the script may touch every window.
    const tag = familyId ?? keyId;
    this.seq += 1;
    let reply: unknown;
    try {
      reply = await this.redis.runRateLimitScript(
        windows.flatMap((w) => [`${prefix}:{${tag}}:${w.keyId}:log`, `${prefix}:{${tag}}:${w.keyId}:tokens`]),
        [tokens, windowMs, `${this.instance}.${this.seq}`, ...windows.flatMap((w) => [w.limits.rpm ?? 0, w.limits.tpm ?? 0])],
      );
    } catch (e) {
      return this.unavailable(e, request);
    }
    if (!Array.isArray(reply) || reply.length !== 6 * windows.length || !reply.every((v) => typeof v === 'number')) {
      return this.unavailable(new Error(`unexpected rate limit script reply: ${JSON.stringify(reply)}`), request);
    }
    const values = reply as number[];
    return decideOver(
      windows.map((w, i): WindowVerdict => {
        const [ok, tooLarge, retryAfterMs, count, sum, resetMs] = values.slice(6 * i, 6 * i + 6) as [number, number, number, number, number, number];
        return { limits: w.limits, ok: ok === 1, tooLarge: tooLarge === 1, retryAfterMs, count, tokens: sum, resetMs };
      }),
    );
  }

  close(): Promise<void> {
    return this.redis.close();
  }

  private unavailable(error: unknown, request: RateRequest): Promise<RateDecision> {
    this.failuresSinceWarning += 1;
    this.opts.onFallback?.(this.opts.onError);
    const now = performance.now();
    if (now - this.lastWarningAt >= WARN_EVERY_MS) {
      this.lastWarningAt = now;
      this.opts.logger.warn(
        this.opts.onError === 'open'
          ? "rate limiter unreachable (Redis): deciding by this instance's own windows (rate_limits.on_redis_error: open)"
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
    return this.opts.fallback.admit(request);
  }
}
