/**
 * Out-of-sample predictions on the dev set: every prompt is predicted by a model that never saw it.
 * - k-fold: stratified by tier, folds fixed by a hash of the id (deterministic, no shuffling seed);
 * - leave-one-source-out: each benchmark is predicted by a model trained on the others only, the test
 *   of "prompts of kinds it has never seen".
 * - leave-one-family-out (real-user prompts): each family of places predicted by a model trained on the
 *   benchmarks, the written prompts and the other families.
 * Prompts written for svc-gateway (`extra`) may be added to every training fold; they are never scored.
 */
import { hashString } from '../../src/routing/auto/hashing.js';
import { scoreFeatures, softmax, type RouterModel } from '../../src/routing/auto/model.js';
import { quantise } from '../../src/routing/auto/weights-codec.js';
import { CLASS_COUNT, GROUP_COUNT } from '../../src/routing/auto/feature-layout.js';
import { FeatureBuffer } from '../../src/routing/auto/scanner.js';
import type { Tier } from '../../src/routing/auto/tier.js';
import type { LabelledPrompt } from './dataset.js';
import type { FeatureRow } from './feature-file.js';
import { EVALUATION_ONLY_SOURCES } from './real-set.js';
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
export function foldsOf(rows: readonly { id: string; tier: Tier }[], k: number): number[] {
  const folds = new Array<number>(rows.length).fill(0);
  const order = rows.map((r, i) => ({ i, tier: r.tier, h: hashString(r.id) >>> 0 }));
  order.sort((a, b) => (a.tier < b.tier ? -1 : a.tier > b.tier ? 1 : a.h - b.h || a.i - b.i));
  order.forEach((o, n) => (folds[o.i] = n % k));
  return folds;
}

/**
 * Each group of `examples` predicted by a model trained on the other groups plus `extra` (never
 * predicted): the out-of-sample probabilities, in example order.
 */
export function predictHeldOut(
  examples: readonly Example[],
  groups: readonly (string | number)[],
  extra: readonly Example[],
  options: TrainOptions = TRAIN_OPTIONS,
  /** Whether an example may be trained on at all (evaluation-only sources are predicted, never learnt). */
  trainable: (i: number) => boolean = () => true,
): Probabilities {
  const out: Probabilities = new Array<Float64Array>(examples.length);
  for (const g of new Set(groups)) {
    const trainSet = examples.filter((_, i) => groups[i] !== g && trainable(i)).concat(extra);
    // Predicted with the weights as they would ship (16-bit), not the training run's floats.
    const model = quantise(train(trainSet, options));
    const testIdx = examples.map((_, i) => (groups[i] === g ? i : -1)).filter((i) => i >= 0);
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
  extraExamples: readonly Example[] = [],
): Probabilities {
  return predictHeldOut(featurize(rows), foldsOf(rows, k), featurize(extraRows).concat(extraExamples), options);
}

export function leaveOneSourceOut(
  rows: readonly LabelledPrompt[],
  extraRows: readonly LabelledPrompt[] = [],
  options: TrainOptions = TRAIN_OPTIONS,
  extraExamples: readonly Example[] = [],
): Probabilities {
  return predictHeldOut(featurize(rows), rows.map((r) => r.source), featurize(extraRows).concat(extraExamples), options);
}

/**
 * The real-user figures: each family of real prompts predicted by a model trained on every other family
 * and on `base` (the benchmarks and the written prompts), so no prompt is judged by a model that saw its
 * kind of place.
 */
export function leaveOneFamilyOut(rows: readonly FeatureRow[], base: readonly Example[], options: TrainOptions = TRAIN_OPTIONS): Probabilities {
  return predictHeldOut(
    rows.map((r) => r.example),
    rows.map((r) => r.family),
    base,
    options,
    (i) => !EVALUATION_ONLY_SOURCES.has((rows[i] as FeatureRow).source),
  );
}
