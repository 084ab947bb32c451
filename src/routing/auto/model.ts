/**
 * The router's model: multinomial logistic regression over the features of features.ts. Scoring is a
 * sparse dot product per tier (a few thousand multiply-adds for a 4 KB prompt), written so that it also
 * records how much each evidence group contributed, which is what the decision's `reason` reports.
 */
import { CLASS_COUNT, DENSE_COUNT, GROUP_COUNT, HASH_GROUP_COUNT, HASH_SIZE } from './feature-layout.js';
import type { FeatureBuffer } from './scanner.js';

export interface RouterModel {
  /** Weight of hashed bucket f for tier k at [f * CLASS_COUNT + k]. */
  hashed: Float32Array;
  /** Weight of dense feature j for tier k at [j * CLASS_COUNT + k]. */
  dense: Float32Array;
  bias: Float32Array;
}

export function emptyModel(): RouterModel {
  return {
    hashed: new Float32Array(HASH_SIZE * CLASS_COUNT),
    dense: new Float32Array(DENSE_COUNT * CLASS_COUNT),
    bias: new Float32Array(CLASS_COUNT),
  };
}

/**
 * Writes each group's contribution to each tier's logit into `contributions[group * CLASS_COUNT + k]`,
 * and the logits. Both arrays are the caller's (reused: no allocation). `buf` may have been filled in
 * serving mode (weights already summed per group) or in recording mode (features listed).
 */
export function scoreFeatures(model: RouterModel, buf: FeatureBuffer, logits: Float64Array, contributions: Float64Array): void {
  contributions.fill(0);
  if (buf.weights !== null) {
    if (buf.weights !== model.hashed) throw new Error('feature buffer was filled with another model');
    for (let slot = 0; slot < 2 * HASH_GROUP_COUNT; slot++) {
      const scale = buf.scale[slot] as number;
      if (scale === 0) continue;
      const g = (slot % HASH_GROUP_COUNT) * CLASS_COUNT;
      const s = slot * CLASS_COUNT;
      for (let k = 0; k < CLASS_COUNT; k++) {
        contributions[g + k] = (contributions[g + k] as number) + (buf.sums[s + k] as number) * scale;
      }
    }
  } else {
    const w = model.hashed;
    for (let i = 0; i < buf.count; i++) {
      const f = (buf.index[i] as number) * CLASS_COUNT;
      const v = buf.value[i] as number;
      const g = (buf.group[i] as number) * CLASS_COUNT;
      contributions[g] = (contributions[g] as number) + (w[f] as number) * v;
      contributions[g + 1] = (contributions[g + 1] as number) + (w[f + 1] as number) * v;
      contributions[g + 2] = (contributions[g + 2] as number) + (w[f + 2] as number) * v;
    }
  }
  const dw = model.dense;
  for (let j = 0; j < DENSE_COUNT; j++) {
    const v = buf.dense[j] as number;
    if (v === 0) continue;
    const g = (HASH_GROUP_COUNT + j) * CLASS_COUNT;
    const f = j * CLASS_COUNT;
    contributions[g] = (dw[f] as number) * v;
    contributions[g + 1] = (dw[f + 1] as number) * v;
    contributions[g + 2] = (dw[f + 2] as number) * v;
  }
  for (let k = 0; k < CLASS_COUNT; k++) {
    let sum = model.bias[k] as number;
    for (let g = 0; g < GROUP_COUNT; g++) sum += contributions[g * CLASS_COUNT + k] as number;
    logits[k] = sum;
  }
}

/** In-place softmax over the first CLASS_COUNT entries. */
export function softmax(values: Float64Array): void {
  let max = -Infinity;
  for (let k = 0; k < CLASS_COUNT; k++) max = Math.max(max, values[k] as number);
  let sum = 0;
  for (let k = 0; k < CLASS_COUNT; k++) {
    const e = Math.exp((values[k] as number) - max);
    values[k] = e;
    sum += e;
  }
  for (let k = 0; k < CLASS_COUNT; k++) values[k] = (values[k] as number) / sum;
}
