/**
 * Offline training of the router: L2-regularised multinomial logistic regression, minimised by L-BFGS
 * from zero. Deterministic by construction (no random initialisation, examples in file order, fixed
 * iteration budget), so a rerun on the same data gives the same weights.
 */
import { CLASS_COUNT, DENSE_COUNT, HASH_SIZE } from '../../src/routing/auto/feature-layout.js';
import { extractFeatures } from '../../src/routing/auto/features.js';
import { emptyModel, type RouterModel } from '../../src/routing/auto/model.js';
import { FeatureBuffer } from '../../src/routing/auto/scanner.js';
import { TIERS } from '../../src/routing/auto/tier.js';
import { requestOf, type LabelledPrompt } from './dataset.js';
import { minimise } from './lbfgs.js';
import { TITLE_FAMILIES } from './real-set.js';

export interface TrainOptions {
  /** L2 penalty on the hashed n-gram weights: they are many and specific, so held short. */
  l2Hashed: number;
  /** L2 penalty on the dense (hand-made) feature weights: few and general, so allowed to grow. */
  l2Dense: number;
  iterations: number;
  /**
   * Weight examples so that every source counts as much as sqrt of its size: large single-style sources
   * (MBPP, natural-instructions) otherwise teach their surface style instead of the rule.
   */
  balanceSources: boolean;
  /**
   * How much a real-user prompt counts against a benchmark or written one of the same balanced weight
   * (real prompts are balanced by family, not by source: the three MCoNaLa languages are one family).
   * Held out by family, no weight moves the model off its under/over-routing curve; 0.1 with titles at 0.1
   * keeps every everyday prompt on svc-fast and the benchmarks' held-out goal met with this training, where
   * 0.3 pulls the benchmarks' logic puzzles toward svc-fast (docs/routing.md, "Trained on them, or not").
   */
  realWeight: number;
  /**
   * A further multiplier for the families of titles (TITLE_FAMILIES: Stack Overflow titles). Their short
   * texts without a code word are nearly all code questions, while a short message typed to an assistant
   * without one is nearly always not; at full weight they teach that any short prompt without evidence
   * may be code, and "knit a scarf with chunky yarn" goes to svc-code.
   */
  titleWeight: number;
  /**
   * A multiplier for the written everyday prompts in eight languages (MULTILINGUAL_SOURCE). They teach that
   * a short Spanish or Japanese text is not a code question by default, which the Stack Overflow titles
   * among the real-user prompts would otherwise teach; at full weight they also pull the benchmarks' logic
   * puzzles toward svc-fast (leave-one-source-out under-routing 5.1% against 4.6% at 0.3).
   */
  multilingualWeight: number;
  /**
   * A multiplier for the written programming questions and their look-alikes (CODE_QUESTIONS_SOURCE): short
   * questions as people type them to a forum or a chat box, in nine languages. They teach that a short
   * question about a list, a string or an error line is code; at full weight they also pull short everyday
   * questions there ("how long do I boil an egg" to svc-code), docs/routing.md.
   */
  codeQuestionsWeight: number;
  /**
   * A multiplier for the written role-play set-ups (PERSONA_SOURCE): "act as", "you are" and "pretend you're"
   * prompts in eight languages whose tier is set by the work asked of the persona, not by the persona. They
   * teach that a set-up's wording ("I want you to act as", "my first request is") says nothing of the tier.
   */
  personaWeight: number;
  /**
   * A multiplier for the written requests that need careful reasoning as chat users type them, and their
   * look-alikes (REASONING_SOURCE): plans with constraints, business and finance trade-offs, expert analysis
   * of a described case, word problems, puzzles, data questions; and definitions, advice and writing on the
   * same topics, which stay svc-fast.
   */
  reasoningWeight: number;
}

/** The source of the written everyday prompts in eight languages (eval/routing/written.jsonl). */
export const MULTILINGUAL_SOURCE = 'svc-gateway-multilingual';
/** The source of the written short programming questions and their everyday look-alikes. */
export const CODE_QUESTIONS_SOURCE = 'svc-gateway-code-questions';
/** The source of the written role-play set-ups. */
export const PERSONA_SOURCE = 'svc-gateway-personas';
/** The source of the written reasoning requests and their look-alikes. */
export const REASONING_SOURCE = 'svc-gateway-reasoning';

/** The multiplier of each written source that has one (the others count 1). */
function writtenWeight(source: string, options: TrainOptions): number {
  if (source === MULTILINGUAL_SOURCE) return options.multilingualWeight;
  if (source === CODE_QUESTIONS_SOURCE) return options.codeQuestionsWeight;
  if (source === PERSONA_SOURCE) return options.personaWeight;
  if (source === REASONING_SOURCE) return options.reasoningWeight;
  return 1;
}

export const TRAIN_OPTIONS: TrainOptions = {
  l2Hashed: 3e-4,
  l2Dense: 3e-4,
  iterations: 300,
  balanceSources: true,
  realWeight: 0.1,
  titleWeight: 0.1,
  multilingualWeight: 0.3,
  codeQuestionsWeight: 0.3,
  personaWeight: 0.05,
  reasoningWeight: 0,
};

export interface Example {
  index: Int32Array;
  value: Float64Array;
  dense: Float64Array;
  label: number;
  source: string;
  /** A real-user prompt (weighed by `realWeight`). */
  real?: boolean;
}

const HASHED_PARAMS = HASH_SIZE * CLASS_COUNT;
const DENSE_PARAMS = DENSE_COUNT * CLASS_COUNT;
export const PARAM_COUNT = HASHED_PARAMS + DENSE_PARAMS + CLASS_COUNT;

/** Features of each row, with repeated buckets merged (a prose text repeats its few shape n-grams often). */
export function featurize(rows: readonly LabelledPrompt[]): Example[] {
  const buf = new FeatureBuffer();
  const merged = new Map<number, number>();
  return rows.map((row) => {
    extractFeatures(requestOf(row), buf);
    merged.clear();
    for (let i = 0; i < buf.count; i++) {
      const f = buf.index[i] as number;
      merged.set(f, (merged.get(f) ?? 0) + (buf.value[i] as number));
    }
    const index = Int32Array.from([...merged.keys()].sort((a, b) => a - b));
    return {
      index,
      value: Float64Array.from(index, (f) => merged.get(f) as number),
      dense: buf.dense.slice(),
      label: TIERS.indexOf(row.tier),
      source: row.source,
    };
  });
}

function exampleWeights(examples: readonly Example[], options: TrainOptions): Float64Array {
  const { balanceSources: balance, realWeight, titleWeight } = options;
  const perSource = new Map<string, number>();
  for (const e of examples) perSource.set(e.source, (perSource.get(e.source) ?? 0) + 1);
  const w = new Float64Array(examples.length);
  let total = 0;
  examples.forEach((e, i) => {
    const family = e.real === true && TITLE_FAMILIES.has(e.source.replace(/^family:/, '')) ? titleWeight : 1;
    const written = writtenWeight(e.source, options);
    w[i] = (balance ? 1 / Math.sqrt(perSource.get(e.source) as number) : 1) * (e.real === true ? realWeight * family : written);
    total += w[i] as number;
  });
  for (let i = 0; i < w.length; i++) w[i] = (w[i] as number) / total;
  return w;
}

/**
 * Mean weighted cross-entropy plus the L2 penalties, and its gradient. Written for three tiers, unrolled,
 * with the layout constants copied into locals: the loops run ~10^8 times per training.
 */
function makeObjective(examples: readonly Example[], weights: Float64Array, options: TrainOptions) {
  const hashedParams = HASHED_PARAMS;
  const biasAt = HASHED_PARAMS + DENSE_PARAMS;
  const denseCount = DENSE_COUNT;
  const l2Hashed = options.l2Hashed;
  const l2Dense = options.l2Dense;
  return (theta: Float64Array, grad: Float64Array): number => {
    grad.fill(0);
    let loss = 0;
    for (let n = 0; n < examples.length; n++) {
      const e = examples[n] as Example;
      const index = e.index;
      const value = e.value;
      const dense = e.dense;
      let z0 = theta[biasAt] as number;
      let z1 = theta[biasAt + 1] as number;
      let z2 = theta[biasAt + 2] as number;
      for (let i = 0; i < index.length; i++) {
        const f = (index[i] as number) * 3;
        const v = value[i] as number;
        z0 += (theta[f] as number) * v;
        z1 += (theta[f + 1] as number) * v;
        z2 += (theta[f + 2] as number) * v;
      }
      for (let j = 0; j < denseCount; j++) {
        const v = dense[j] as number;
        if (v === 0) continue;
        const f = hashedParams + j * 3;
        z0 += (theta[f] as number) * v;
        z1 += (theta[f + 1] as number) * v;
        z2 += (theta[f + 2] as number) * v;
      }
      const max = Math.max(z0, z1, z2);
      const logSum = max + Math.log(Math.exp(z0 - max) + Math.exp(z1 - max) + Math.exp(z2 - max));
      const w = weights[n] as number;
      const label = e.label;
      loss += w * (logSum - (label === 0 ? z0 : label === 1 ? z1 : z2));
      // d loss / d logit_k = w * (p_k - [k = label])
      const g0 = w * (Math.exp(z0 - logSum) - (label === 0 ? 1 : 0));
      const g1 = w * (Math.exp(z1 - logSum) - (label === 1 ? 1 : 0));
      const g2 = w * (Math.exp(z2 - logSum) - (label === 2 ? 1 : 0));
      for (let i = 0; i < index.length; i++) {
        const f = (index[i] as number) * 3;
        const v = value[i] as number;
        grad[f] = (grad[f] as number) + g0 * v;
        grad[f + 1] = (grad[f + 1] as number) + g1 * v;
        grad[f + 2] = (grad[f + 2] as number) + g2 * v;
      }
      for (let j = 0; j < denseCount; j++) {
        const v = dense[j] as number;
        if (v === 0) continue;
        const f = hashedParams + j * 3;
        grad[f] = (grad[f] as number) + g0 * v;
        grad[f + 1] = (grad[f + 1] as number) + g1 * v;
        grad[f + 2] = (grad[f + 2] as number) + g2 * v;
      }
      grad[biasAt] = (grad[biasAt] as number) + g0;
      grad[biasAt + 1] = (grad[biasAt + 1] as number) + g1;
      grad[biasAt + 2] = (grad[biasAt + 2] as number) + g2;
    }
    for (let p = 0; p < biasAt; p++) {
      const t = theta[p] as number;
      if (t === 0) continue;
      const l2 = p < hashedParams ? l2Hashed : l2Dense;
      loss += 0.5 * l2 * t * t;
      grad[p] = (grad[p] as number) + l2 * t;
    }
    return loss;
  };
}

export function train(examples: readonly Example[], options: TrainOptions = TRAIN_OPTIONS): RouterModel {
  if (CLASS_COUNT !== 3) throw new Error('the trainer is written for three tiers');
  const objective = makeObjective(examples, exampleWeights(examples, options), options);
  const theta = minimise(objective, new Float64Array(PARAM_COUNT), options.iterations);
  const model = emptyModel();
  model.hashed.set(theta.subarray(0, HASHED_PARAMS));
  model.dense.set(theta.subarray(HASHED_PARAMS, HASHED_PARAMS + DENSE_PARAMS));
  model.bias.set(theta.subarray(HASHED_PARAMS + DENSE_PARAMS));
  return model;
}
