import { describe, expect, it } from 'vitest';
import { calibration, pMore } from '../../scripts/router/calibration.js';
import type { Tier } from '../../src/routing/auto/tier.js';

const p = (fast: number, code: number, smart: number): Float64Array => Float64Array.from([fast, code, smart]);

describe('router calibration report', () => {
  it('reads the probability of needing more than svc-fast', () => {
    expect(pMore(p(0.25, 0.5, 0.25))).toBeCloseTo(0.75);
  });

  it('is 0 for probabilities that say what happens, and the gap for ones that do not', () => {
    // Of ten prompts given 0.35 of needing more, four do; of ten given 0.95, all do.
    const probs = [...Array.from({ length: 10 }, () => p(0.65, 0.2, 0.15)), ...Array.from({ length: 10 }, () => p(0.05, 0.9, 0.05))];
    const gold: Tier[] = [...Array.from({ length: 10 }, (_, i): Tier => (i < 4 ? 'smart' : 'fast')), ...Array.from({ length: 10 }, (): Tier => 'code')];
    const c = calibration(probs, gold);
    const filled = c.bins.filter((b) => b.n > 0);
    expect(filled.map((b) => [b.from, b.n])).toEqual([[0.3, 10], [0.9, 10]]);
    expect(filled[0]?.predicted).toBeCloseTo(0.35);
    expect(filled[0]?.observed).toBeCloseTo(0.4);
    expect(filled[1]?.observed).toBe(1);
    // Half the prompts 0.05 off, half 0.05 off: 0.05.
    expect(c.ece).toBeCloseTo(0.05);
    expect(c.observed).toBeCloseTo(0.7);
    const exact = calibration([p(1, 0, 0), p(0, 0, 1)], ['fast', 'smart']);
    expect(exact.ece).toBe(0);
  });
});
