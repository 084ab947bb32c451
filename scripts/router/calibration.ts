/**
 * How far the router's probabilities can be taken at their word: the dial (src/routing/auto/decision.ts)
 * thresholds the probability that a prompt needs more than svc-fast, so that is the probability whose
 * calibration matters. Reported on held-out predictions (eval-router.ts): of the prompts given a
 * probability near p of needing more, about p should.
 */
import type { Tier } from '../../src/routing/auto/tier.js';

export interface ReliabilityBin {
  /** The bin's range of predicted probability, [from, to). */
  from: number;
  to: number;
  n: number;
  /** Mean predicted probability of needing more than svc-fast in the bin. */
  predicted: number;
  /** Share of the bin's prompts that do (gold code or smart). */
  observed: number;
}

export interface Calibration {
  bins: ReliabilityBin[];
  /** Expected calibration error: the bins' |predicted - observed|, weighted by their share of prompts. */
  ece: number;
  /** Mean predicted and observed over all prompts. */
  predicted: number;
  observed: number;
}

/** Probability of needing more than svc-fast from (fast, code, smart) probabilities. */
export function pMore(p: Float64Array): number {
  return 1 - (p[0] as number);
}

/** Reliability of P(needs more than svc-fast) in `binCount` equal-width bins. */
export function calibration(probs: readonly Float64Array[], gold: readonly Tier[], binCount = 10): Calibration {
  if (probs.length !== gold.length) throw new Error('one gold tier per prediction');
  const sums = Array.from({ length: binCount }, () => ({ n: 0, predicted: 0, observed: 0 }));
  let predicted = 0;
  let observed = 0;
  probs.forEach((p, i) => {
    const q = pMore(p);
    const more = gold[i] === 'fast' ? 0 : 1;
    const bin = sums[Math.min(binCount - 1, Math.floor(q * binCount))] as { n: number; predicted: number; observed: number };
    bin.n += 1;
    bin.predicted += q;
    bin.observed += more;
    predicted += q;
    observed += more;
  });
  const n = probs.length;
  const bins = sums.map((s, b) => ({
    from: b / binCount,
    to: (b + 1) / binCount,
    n: s.n,
    predicted: s.n === 0 ? 0 : s.predicted / s.n,
    observed: s.n === 0 ? 0 : s.observed / s.n,
  }));
  const ece = n === 0 ? 0 : bins.reduce((sum, b) => sum + (b.n / n) * Math.abs(b.predicted - b.observed), 0);
  return { bins, ece, predicted: n === 0 ? 0 : predicted / n, observed: n === 0 ? 0 : observed / n };
}
