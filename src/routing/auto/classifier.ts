/**
 * svc-auto's tier choice: features of the request -> the committed model -> tier probabilities -> the
 * cost/quality dial. Everything the hot path touches is allocated once at module load; a decision costs
 * a scan of at most ~6.5k characters and a few thousand multiply-adds (docs/routing.md has the figures).
 */
import { CLASS_COUNT, GROUP_COUNT } from './feature-layout.js';
import { decide } from './decision.js';
import { extractFeatures, type RoutableRequest } from './features.js';
import { scoreFeatures, softmax, type RouterModel } from './model.js';
import { FeatureBuffer } from './scanner.js';
import type { TierDecision } from './tier.js';
import { decodeModel } from './weights-codec.js';
import { WEIGHTS } from './weights.generated.js';

export type { RoutableRequest } from './features.js';

const model: RouterModel = decodeModel(WEIGHTS);
const buffer = new FeatureBuffer();
buffer.weights = model.hashed;
const probabilities = new Float64Array(CLASS_COUNT);
const contributions = new Float64Array(GROUP_COUNT * CLASS_COUNT);

/** Scores a request into the module's scratch arrays (synchronous, so sharing them is safe). */
function score(request: RoutableRequest): void {
  extractFeatures(request, buffer);
  scoreFeatures(model, buffer, probabilities, contributions);
  softmax(probabilities);
}

/** The tier svc-auto sends this request to; `qualityBias` is the dial (0..1, docs/routing.md). */
export function classifyRequest(request: RoutableRequest, qualityBias: number): TierDecision {
  score(request);
  return decide(probabilities, contributions, qualityBias);
}

/** Probabilities and per-group contributions of the last scored request, copied (for explanations). */
export function scoreRequest(request: RoutableRequest): { probabilities: Float64Array; contributions: Float64Array } {
  score(request);
  return { probabilities: probabilities.slice(), contributions: contributions.slice() };
}

export function routerModel(): RouterModel {
  return model;
}
