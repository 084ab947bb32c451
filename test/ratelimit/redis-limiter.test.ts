/** The same rules through the Lua script on the real Redis at 127.0.0.1:6379 (fails, never skips, without it). */
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { RedisRateLimiter } from '../../src/ratelimit/redis-limiter.js';
import { connectRateLimitRedis } from '../../src/runtime/node/redis-client.js';
import { limiterCases } from './limiter.case.js';

const REDIS = 'redis://127.0.0.1:6379';
const prefix = `svc:test:${process.pid}:${Date.now()}`;

async function limiter(url = REDIS, onError: 'open' | 'closed' = 'open') {
  const runner = await connectRateLimitRedis(url, { timeoutMs: 500, logger: silentLogger });
  return new RedisRateLimiter(runner, { onError, logger: silentLogger, prefix });
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
  it('fails open by default: admits, no headers, never throws', async () => {
    const l = await limiter('redis://127.0.0.1:1');
    const d = await l.admit({ keyId: 'k', limits: { rpm: 1, tpm: null }, tokens: 1 });
    expect(d).toEqual({ allowed: true, requests: null, tokens: null, retryAfterMs: 0, tooLarge: false });
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
