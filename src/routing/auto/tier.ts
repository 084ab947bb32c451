/** svc-auto's three destinations and the decision it reports in the `svc.routing` metadata. */

export type Tier = 'fast' | 'code' | 'smart';

/** Class order of the model's weights and probabilities: index 0 = fast, 1 = code, 2 = smart. */
export const TIERS: readonly Tier[] = ['fast', 'code', 'smart'];

export interface TierDecision {
  tier: Tier;
  /** The model's probability that the chosen tier is the right one (0..1, two decimals). */
  confidence: number;
  /** A few words: the strongest evidence for the choice. */
  reason: string;
}
