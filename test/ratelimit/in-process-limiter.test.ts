import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { InProcessRateLimiter } from '../../src/ratelimit/sliding-window.js';
import { limiterCases } from './limiter.case.js';

limiterCases('in process', () => new InProcessRateLimiter(new ManualClock(1_000_000)));

describe('in-process sliding window over time', () => {
  it('frees each request exactly 60 s after it was admitted, and says when', () => {
    const clock = new ManualClock(1_000_000);
    const limiter = new InProcessRateLimiter(clock);
    const req = { keyId: 'k', limits: { rpm: 3, tpm: null }, tokens: 1 };
    expect(limiter.decide(req).allowed).toBe(true);
    clock.advance(10_000);
    expect(limiter.decide(req).allowed).toBe(true);
    clock.advance(10_000);
    expect(limiter.decide(req)).toMatchObject({ allowed: true, requests: { remaining: 0, resetMs: 60_000 } });
    clock.advance(1_000);
    // The oldest leaves the window at 1,060,000: 39 s from now.
    expect(limiter.decide(req)).toMatchObject({ allowed: false, retryAfterMs: 39_000 });
    clock.advance(38_999);
    expect(limiter.decide(req).allowed).toBe(false);
    clock.advance(1);
    expect(limiter.decide(req)).toMatchObject({ allowed: true, requests: { remaining: 0 } });
    expect(limiter.decide(req)).toMatchObject({ allowed: false, retryAfterMs: 10_000 });
  });

  it('on tokens, waits until enough of the oldest entries have left', () => {
    const clock = new ManualClock(0);
    const limiter = new InProcessRateLimiter(clock);
    const at = (tokens: number) => limiter.decide({ keyId: 'k', limits: { rpm: null, tpm: 100 }, tokens });
    expect(at(30).allowed).toBe(true);
    clock.advance(5_000);
    expect(at(30).allowed).toBe(true);
    clock.advance(5_000);
    expect(at(30).allowed).toBe(true);
    // 90 in the window; 70 more need the first two gone (60 freed): at 65 s.
    expect(at(70)).toMatchObject({ allowed: false, retryAfterMs: 55_000, tokens: { remaining: 10 } });
    clock.advance(55_000);
    expect(at(70)).toMatchObject({ allowed: true, tokens: { remaining: 0 } });
  });

  it('forgets keys idle for a whole window', () => {
    const clock = new ManualClock(0);
    const limiter = new InProcessRateLimiter(clock);
    for (let i = 0; i < 1000; i++) limiter.decide({ keyId: `k${i}`, limits: { rpm: 5, tpm: null }, tokens: 1 });
    expect(limiter.size).toBe(1000);
    clock.advance(60_001);
    for (let i = 0; i < 1000; i++) limiter.decide({ keyId: `fresh${i % 10}`, limits: { rpm: 5, tpm: null }, tokens: 1 });
    expect(limiter.size).toBe(10);
  });
});
