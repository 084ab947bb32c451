/** The cost/quality dial: from tier probabilities to a tier, for every setting of quality_bias. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chooseTier, decide, DEFAULT_QUALITY_BIAS, fastExitThreshold } from '../../src/routing/auto/decision.js';
import { CLASS_COUNT, GROUP_COUNT } from '../../src/routing/auto/feature-layout.js';

const FAST = 0;
const CODE = 1;
const SMART = 2;
const PRICE = [12, 40, 75];
const noEvidence = new Float64Array(GROUP_COUNT * CLASS_COUNT);

const probabilities = fc
  .tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true }))
  .filter(([a, b, c]) => a + b + c > 1e-6)
  .map(([a, b, c]) => [a / (a + b + c), b / (a + b + c), c / (a + b + c)]);

describe('quality bias dial', () => {
  it('defaults to favouring quality: a prompt leaves svc-fast at one chance in three of needing more', () => {
    expect(DEFAULT_QUALITY_BIAS).toBe(0.7);
    expect(fastExitThreshold(DEFAULT_QUALITY_BIAS)).toBeCloseTo(0.337, 3);
    expect(chooseTier([0.62, 0, 0.38], DEFAULT_QUALITY_BIAS)).toBe(SMART);
    expect(chooseTier([0.7, 0, 0.3], DEFAULT_QUALITY_BIAS)).toBe(FAST);
    // The same prompt at the neutral setting stays on the most likely tier.
    expect(chooseTier([0.62, 0, 0.38], 0.5)).toBe(FAST);
  });

  it('never pays more when the bias goes down, never less when it goes up', () => {
    fc.assert(
      fc.property(probabilities, fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true }), (p, q1, q2) => {
        const [lo, hi] = q1 <= q2 ? [q1, q2] : [q2, q1];
        expect(PRICE[chooseTier(p, lo)]).toBeLessThanOrEqual(PRICE[chooseTier(p, hi)] as number);
      }),
    );
  });

  it('follows a sure model whatever the bias', () => {
    for (const q of [0, 0.3, 0.7, 1]) {
      expect(chooseTier([0.97, 0.02, 0.01], q)).toBe(FAST);
      expect(chooseTier([0.01, 0.98, 0.01], q)).toBe(CODE);
      expect(chooseTier([0.01, 0.01, 0.98], q)).toBe(SMART);
    }
  });

  it('spans from cheap to capable across the range', () => {
    const unsure = [0.5, 0.1, 0.4];
    expect(chooseTier(unsure, 0)).toBe(FAST);
    expect(chooseTier(unsure, 1)).toBe(SMART);
    expect(fastExitThreshold(-3)).toBe(fastExitThreshold(0)); // clamped
    expect(fastExitThreshold(7)).toBe(fastExitThreshold(1));
  });

  it('sends code-or-math uncertainty to the tier that can do both', () => {
    expect(chooseTier([0.05, 0.5, 0.45], DEFAULT_QUALITY_BIAS)).toBe(SMART);
    expect(chooseTier([0.05, 0.8, 0.15], DEFAULT_QUALITY_BIAS)).toBe(CODE);
  });

  it('reports the chosen tier, its probability and why', () => {
    const evidence = new Float64Array(GROUP_COUNT * CLASS_COUNT);
    evidence[0 * CLASS_COUNT + SMART] = 2; // wording
    evidence[5 * CLASS_COUNT + SMART] = 1; // a dense group
    const sure = decide([0.02, 0.03, 0.95], evidence, 0.7);
    expect(sure).toEqual({ tier: 'smart', confidence: 0.95, reason: expect.stringMatching(/^wording, /) });
    const nudged = decide([0.6, 0.02, 0.38], noEvidence, 0.7);
    expect(nudged.tier).toBe('smart');
    expect(nudged.confidence).toBe(0.38);
    expect(nudged.reason).toBe('quality bias 0.7: fast too uncertain (p=0.60)');
  });
});
