/**
 * Why svc-auto chose a tier, for operators (`svc-gateway route`): the probabilities, the dial's threshold,
 * the evidence groups that pushed hardest, and the words of the prompt with the largest learned weights.
 * Allocates freely: it is never on the request path.
 */
import type { ContentPart } from '../../openai/chat-types.js';
import { scoreRequest, routerModel } from './classifier.js';
import { decide, fastExitThreshold } from './decision.js';
import { CLASS_COUNT, GROUP_COUNT, GROUP_LABELS } from './feature-layout.js';
import { MAIN_HEAD_CHARS, type RoutableRequest } from './features.js';
import { bigramIndex, tokenHashOf, unigramIndex, wordsOf } from './scanner.js';
import { TIERS, type Tier, type TierDecision } from './tier.js';

export interface Evidence {
  /** What the evidence is: an evidence group ("math words") or a word or pair of words of the prompt. */
  what: string;
  /** Its contribution to each tier's score (log-odds units). */
  toward: Record<Tier, number>;
}

export interface RouteExplanation {
  decision: TierDecision;
  qualityBias: number;
  /** The probability of needing more than svc-fast above which svc-auto leaves it, at this bias. */
  fastExitThreshold: number;
  probabilities: Record<Tier, number>;
  /** Evidence groups, strongest first. */
  groups: Evidence[];
  /** Words and word pairs of the last user turn with the largest learned weights, strongest first. */
  terms: Evidence[];
}

function byTier(values: ArrayLike<number>, offset = 0, scale = 1): Record<Tier, number> {
  const out = {} as Record<Tier, number>;
  TIERS.forEach((t, k) => (out[t] = Math.round((values[offset + k] as number) * scale * 1000) / 1000));
  return out;
}

function spread(e: Evidence): number {
  const v = Object.values(e.toward);
  return Math.max(...v) - Math.min(...v);
}

function lastUserText(request: RoutableRequest): string {
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const m = request.messages[i];
    if (m?.role !== 'user') continue;
    if (typeof m.content === 'string') return m.content;
    return (m.content ?? []).filter((p): p is Extract<ContentPart, { type: 'text' }> => p.type === 'text').map((p) => p.text).join('\n');
  }
  return '';
}

function termEvidence(request: RoutableRequest, limit: number): Evidence[] {
  const w = routerModel().hashed;
  const seen = new Map<string, Evidence>();
  const add = (what: string, index: number): void => {
    if (seen.has(what)) return;
    seen.set(what, { what, toward: byTier(w, index * CLASS_COUNT) });
  };
  let previous: string | null = null;
  for (const word of wordsOf(lastUserText(request).slice(0, MAIN_HEAD_CHARS)).map((w) => w.toLowerCase())) {
    const token = tokenHashOf(word);
    add(word, unigramIndex(token));
    if (previous !== null) add(`${previous} ${word}`, bigramIndex(tokenHashOf(previous), token));
    previous = word;
  }
  return [...seen.values()].sort((a, b) => spread(b) - spread(a)).slice(0, limit);
}

export function explainRequest(request: RoutableRequest, qualityBias: number, terms = 8): RouteExplanation {
  const { probabilities, contributions } = scoreRequest(request);
  const groups: Evidence[] = [];
  for (let g = 0; g < GROUP_COUNT; g++) {
    const e = { what: GROUP_LABELS[g] as string, toward: byTier(contributions, g * CLASS_COUNT) };
    if (spread(e) > 0.005) groups.push(e);
  }
  groups.sort((a, b) => spread(b) - spread(a));
  return {
    decision: decide(probabilities, contributions, qualityBias),
    qualityBias,
    fastExitThreshold: Math.round(fastExitThreshold(qualityBias) * 1000) / 1000,
    probabilities: byTier(probabilities),
    groups,
    terms: termEvidence(request, terms),
  };
}
