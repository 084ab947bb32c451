/** The same rules through the Lua script on the real Redis at 127.0.0.1:6379 (fails, never skips, without it). */
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { RedisRateLimiter } from '../../src/ratelimit/redis-limiter.js';
import { InProcessRateLimiter } from '../../src/ratelimit/sliding-window.js';
import { systemClock } from '../../src/core/clock.js';
import { connectRateLimitRedis } from '../../src/runtime/node/redis-client.js';
import { limiterCases } from './limiter.case.js';

const REDIS = 'redis://127.0.0.1:6379';
const prefix = `svc:test:${process.pid}:${Date.now()}`;

async function limiter(url = REDIS, onError: 'open' | 'closed' = 'open', onFallback?: () => void) {
  const runner = await connectRateLimitRedis(url, { timeoutMs: 500, logger: silentLogger });
  return new RedisRateLimiter(runner, { onError, logger: silentLogger, prefix, fallback: new InProcessRateLimiter(systemClock), ...(onFallback ? { onFallback } : {}) });
}

const pending: Promise<RedisRateLimiter>[] = [];
limiterCases('Redis (Lua script)', () => {
  // The cases call make() synchronously; the connection is awaited on first use.
  const made = limiter();
  pending.push(made);
  return {
    admit: async (r) => (await made).admit(r),
    close: async () => (await made).close(),
  };
});

describe('Redis limiter when Redis does not answer', () => {
  it("fails open by default: this instance's own windows decide, counted, never a throw", async () => {
    let fallbacks = 0;
    const l = await limiter('redis://127.0.0.1:1', 'open', () => (fallbacks += 1));
    const first = await l.admit({ keyId: 'k', limits: { rpm: 2, tpm: null }, tokens: 1 });
    const second = await l.admit({ keyId: 'k', limits: { rpm: 2, tpm: null }, tokens: 1 });
    const third = await l.admit({ keyId: 'k', limits: { rpm: 2, tpm: null }, tokens: 1 });
    expect([first.allowed, second.allowed, third.allowed]).toEqual([true, true, false]);
    expect(third.retryAfterMs).toBeGreaterThan(0);
    expect(fallbacks).toBe(3);
    await l.close();
  });

  it('fails closed when configured: a 503 rate_limiter_unavailable', async () => {
    const l = await limiter('redis://127.0.0.1:1', 'closed');
    await expect(l.admit({ keyId: 'k', limits: { rpm: 1, tpm: null }, tokens: 1 })).rejects.toMatchObject({
      status: 503,
      code: 'rate_limiter_unavailable',
      headers: { 'retry-after': '1' },
    });
    await l.close();
  });
});
