/**
 * From tier probabilities to a tier: the cost/quality dial. Each tier t has an expected cost
 *
 *   cost(t) = price(t) + lambda * sum over g of p(g) * shortfall(t, g)
 *
 * where price is the tier's relative price and shortfall(t, g) is how badly tier t serves a prompt whose
 * right tier is g (1 = the cheap model cannot do it, 0 = it can). svc-auto picks the cheapest tier in
 * that sense. lambda comes from quality_bias through one readable number, the fast-exit threshold: the
 * probability that a prompt needs more than svc-fast above which it leaves svc-fast. It falls linearly
 * from 0.89 at quality_bias 0 to 0.10 at 1; 0.5 is about a plain "most likely tier", and the default
 * 0.7 (threshold 0.34) leaves fast at one chance in three, because a hard prompt answered badly costs the
 * user more than an easy prompt answered expensively.
 */
import { CLASS_COUNT, GROUP_COUNT, GROUP_LABELS } from './feature-layout.js';
import { TIERS, type Tier, type TierDecision } from './tier.js';

/** Output prices per 1k tokens of svc-fast, svc-code, svc-smart (12, 40, 75), relative to svc-smart. */
const PRICE = [12 / 75, 40 / 75, 1];

/** SHORTFALL[t][g]: quality lost when tier t answers a prompt whose right tier is g. */
const SHORTFALL = [
  [0, 1, 1], // fast for code or for math and logic: the cheap model often fails
  [0.2, 0, 0.8], // code for prose: able but a specialist; for math and logic: not the reasoning tier
  [0, 0.1, 0], // smart for code: able, slightly less specialised
];

export const DEFAULT_QUALITY_BIAS = 0.7;

/** The probability of "needs more than fast" above which svc-auto leaves svc-fast. */
export function fastExitThreshold(qualityBias: number): number {
  const q = Math.min(1, Math.max(0, qualityBias));
  return 0.89 - 0.79 * q;
}

/** lambda such that fast and smart cost the same when p(smart) equals the fast-exit threshold. */
export function qualityWeight(qualityBias: number): number {
  return ((PRICE[2] as number) - (PRICE[0] as number)) / fastExitThreshold(qualityBias);
}

/** The chosen tier index for probabilities `p` (fast, code, smart). */
export function chooseTier(p: ArrayLike<number>, qualityBias: number): number {
  const lambda = qualityWeight(qualityBias);
  let best = 0;
  let bestCost = Infinity;
  for (let t = 0; t < CLASS_COUNT; t++) {
    let shortfall = 0;
    const row = SHORTFALL[t] as number[];
    for (let g = 0; g < CLASS_COUNT; g++) shortfall += (p[g] as number) * (row[g] as number);
    const cost = (PRICE[t] as number) + lambda * shortfall;
    if (cost < bestCost) {
      bestCost = cost;
      best = t;
    }
  }
  return best;
}

function argmax(p: ArrayLike<number>): number {
  let best = 0;
  for (let k = 1; k < CLASS_COUNT; k++) if ((p[k] as number) > (p[best] as number)) best = k;
  return best;
}

/** The two evidence groups that most favour tier `t` over tier `other`. */
function topEvidence(contributions: ArrayLike<number>, t: number, other: number): string {
  let first = -1;
  let second = -1;
  let firstScore = 0;
  let secondScore = 0;
  for (let g = 0; g < GROUP_COUNT; g++) {
    const s = (contributions[g * CLASS_COUNT + t] as number) - (contributions[g * CLASS_COUNT + other] as number);
    if (s > firstScore) {
      second = first;
      secondScore = firstScore;
      first = g;
      firstScore = s;
    } else if (s > secondScore) {
      second = g;
      secondScore = s;
    }
  }
  if (first < 0) return 'no strong evidence';
  return second < 0 ? (GROUP_LABELS[first] as string) : `${GROUP_LABELS[first]}, ${GROUP_LABELS[second]}`;
}

/** Probabilities and per-group contributions -> the decision reported in `svc.routing`. */
export function decide(p: ArrayLike<number>, contributions: ArrayLike<number>, qualityBias: number): TierDecision {
  const t = chooseTier(p, qualityBias);
  const likeliest = argmax(p);
  let reason: string;
  if (t !== likeliest) {
    reason = `quality bias ${qualityBias}: ${TIERS[likeliest]} too uncertain (p=${(p[likeliest] as number).toFixed(2)})`;
  } else {
    let runnerUp = t === 0 ? 1 : 0;
    for (let k = 0; k < CLASS_COUNT; k++) if (k !== t && (p[k] as number) > (p[runnerUp] as number)) runnerUp = k;
    reason = topEvidence(contributions, t, runnerUp);
  }
  return { tier: TIERS[t] as Tier, confidence: Math.round((p[t] as number) * 100) / 100, reason };
}
