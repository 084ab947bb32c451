/**
 * Out-of-sample predictions on the dev set: every prompt is predicted by a model that never saw it.
 * - k-fold: stratified by tier, folds fixed by a hash of the id (deterministic, no shuffling seed);
 * - leave-one-source-out: each benchmark is predicted by a model trained on the others only, the test
 *   of "prompts of kinds it has never seen".
 * Prompts written for svc-gateway (`extra`) may be added to every training fold; they are never scored.
 */
import { hashString } from '../../src/routing/auto/hashing.js';
import { scoreFeatures, softmax, type RouterModel } from '../../src/routing/auto/model.js';
import { quantise } from '../../src/routing/auto/weights-codec.js';
import { CLASS_COUNT, GROUP_COUNT } from '../../src/routing/auto/feature-layout.js';
import { FeatureBuffer } from '../../src/routing/auto/scanner.js';
import type { LabelledPrompt } from './dataset.js';
import { featurize, train, TRAIN_OPTIONS, type Example, type TrainOptions } from './train.js';

/** Probabilities (fast, code, smart) per dev row, in row order. */
export type Probabilities = Float64Array[];

export function predict(model: RouterModel, examples: readonly Example[]): Probabilities {
  const buf = new FeatureBuffer();
  const contributions = new Float64Array(GROUP_COUNT * CLASS_COUNT);
  return examples.map((e) => {
    buf.reset();
    buf.weights = null;
    buf.index.set(e.index);
    buf.value.set(e.value);
    buf.count = e.index.length;
    buf.dense.set(e.dense);
    const p = new Float64Array(CLASS_COUNT);
    scoreFeatures(model, buf, p, contributions);
    softmax(p);
    return p;
  });
}

/** Fold of each row: rows of each tier ordered by hash of their id, then dealt round-robin. */
export function foldsOf(rows: readonly LabelledPrompt[], k: number): number[] {
  const folds = new Array<number>(rows.length).fill(0);
  const order = rows.map((r, i) => ({ i, tier: r.tier, h: hashString(r.id) >>> 0 }));
  order.sort((a, b) => (a.tier < b.tier ? -1 : a.tier > b.tier ? 1 : a.h - b.h || a.i - b.i));
  order.forEach((o, n) => (folds[o.i] = n % k));
  return folds;
}

function heldOut(
  rows: readonly LabelledPrompt[],
  examples: readonly Example[],
  extra: readonly Example[],
  groupOf: (row: LabelledPrompt, i: number) => string | number,
  options: TrainOptions,
): Probabilities {
  const out: Probabilities = new Array<Float64Array>(rows.length);
  const groups = [...new Set(rows.map(groupOf))];
  for (const g of groups) {
    const trainSet = examples.filter((_, i) => groupOf(rows[i] as LabelledPrompt, i) !== g).concat(extra);
    // Predicted with the weights as they would ship (16-bit), not the training run's floats.
    const model = quantise(train(trainSet, options));
    const testIdx = rows.map((r, i) => (groupOf(r, i) === g ? i : -1)).filter((i) => i >= 0);
    const probs = predict(model, testIdx.map((i) => examples[i] as Example));
    testIdx.forEach((i, n) => (out[i] = probs[n] as Float64Array));
  }
  return out;
}

export function kFold(
  rows: readonly LabelledPrompt[],
  k: number,
  extraRows: readonly LabelledPrompt[] = [],
  options: TrainOptions = TRAIN_OPTIONS,
): Probabilities {
  const folds = foldsOf(rows, k);
  return heldOut(rows, featurize(rows), featurize(extraRows), (_, i) => folds[i] as number, options);
}

export function leaveOneSourceOut(
  rows: readonly LabelledPrompt[],
  extraRows: readonly LabelledPrompt[] = [],
  options: TrainOptions = TRAIN_OPTIONS,
): Probabilities {
  return heldOut(rows, featurize(rows), featurize(extraRows), (r) => r.source, options);
}
