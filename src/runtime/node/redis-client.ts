/**
 * The Redis client of the shared rate limiter (ioredis), tuned to fail fast: no offline queue (a command
 * while disconnected fails at once instead of waiting for a reconnect), no per-command retries, and a
 * command timeout, so an unreachable Redis costs a request `rate_limits.redis_timeout_ms` at most before
 * the configured failure policy applies. Reconnects in the background (every 0.1-2 s).
 */
import { Redis } from 'ioredis';
import type { Logger } from '../../core/logger.js';
import type { RateLimitScriptRunner } from '../../ratelimit/redis-limiter.js';
import { SLIDING_WINDOW_SCRIPT } from '../../ratelimit/sliding-window-script.js';

type ScriptedRedis = Redis & {
  /** The number of keys first (the script takes two per window of a key family), then the keys and args. */
  svcRateLimit(numberOfKeys: number, ...keysAndArgs: (string | number)[]): Promise<unknown>;
};

export async function connectRateLimitRedis(url: string, opts: { timeoutMs: number; logger: Logger }): Promise<RateLimitScriptRunner> {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: opts.timeoutMs,
    connectTimeout: Math.max(1000, opts.timeoutMs),
    retryStrategy: (times) => Math.min(100 * times, 2000),
    lazyConnect: true,
  }) as ScriptedRedis;
  // EVALSHA, falling back to EVAL once when Redis lost the script (a restart, SCRIPT FLUSH).
  redis.defineCommand('svcRateLimit', { lua: SLIDING_WINDOW_SCRIPT });
  let down = false;
  redis.on('error', (e: Error) => {
    if (down) return;
    down = true;
    opts.logger.warn('redis connection error (rate limits)', { error: e.message });
  });
  redis.on('ready', () => {
    if (down) opts.logger.info('redis reachable again (rate limits)');
    down = false;
  });
  // A gateway starts even when Redis is down: the failure policy covers the requests until it is back.
  await redis.connect().catch((e: unknown) => opts.logger.warn('redis unreachable at start (rate limits)', { error: String(e) }));
  return {
    runRateLimitScript: (keys, args) => redis.svcRateLimit(keys.length, ...keys, ...args),
    async close() {
      redis.disconnect();
    },
  };
}
