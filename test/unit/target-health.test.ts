/** The circuit breaker's state machine and the latency estimate, on a hand-moved clock. */
import { describe, expect, it } from 'vitest';
import { TargetHealth } from '../../src/routing/health.js';

function breaker() {
  let now = 1_000_000;
  const health = new TargetHealth({ failureThreshold: 3, openMs: 1000, maxOpenMs: 3000, latencyAlpha: 0.5 }, () => now);
  return { health, advance: (ms: number) => (now += ms) };
}

describe('TargetHealth', () => {
  it('stays closed below the threshold, and a success resets the count', () => {
    const { health } = breaker();
    health.failure();
    health.failure();
    health.success(100);
    health.failure();
    health.failure();
    expect(health.admit()).toBe('call');
    expect(health.snapshot().state).toBe('closed');
  });

  it('opens after consecutive failures, lets one probe through after the open period, closes on its success', () => {
    const { health, advance } = breaker();
    for (let i = 0; i < 3; i++) health.failure();
    expect(health.admit()).toBe('skip');
    advance(999);
    expect(health.admit()).toBe('skip');
    advance(1);
    expect(health.admit()).toBe('probe');
    // Only one probe at a time.
    expect(health.admit()).toBe('skip');
    health.success(50);
    expect(health.admit()).toBe('call');
    expect(health.snapshot()).toMatchObject({ state: 'closed', consecutiveFailures: 0 });
  });

  it('doubles the open period on each failed probe, up to the maximum', () => {
    const { health, advance } = breaker();
    for (let i = 0; i < 3; i++) health.failure();
    const periods: number[] = [];
    for (let round = 0; round < 4; round++) {
      let waited = 0;
      while (health.admit() === 'skip') {
        advance(100);
        waited += 100;
      }
      periods.push(waited);
      health.failure();
    }
    expect(periods).toEqual([1000, 2000, 3000, 3000]);
  });

  it('a released probe lets the next request probe', () => {
    const { health, advance } = breaker();
    for (let i = 0; i < 3; i++) health.failure();
    advance(1000);
    expect(health.admit()).toBe('probe');
    health.release();
    expect(health.admit()).toBe('probe');
  });

  it('keeps a moving estimate of the time to first token', () => {
    const { health } = breaker();
    expect(health.snapshot().firstTokenMs).toBeNull();
    health.success(100);
    health.success(300);
    expect(health.snapshot().firstTokenMs).toBe(200);
    health.success(null);
    expect(health.snapshot().firstTokenMs).toBe(200);
  });
});
