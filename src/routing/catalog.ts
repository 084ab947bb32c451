/**
 * The public catalog: the four aliases clients may ask for, with their prices. The catalog is the
 * contract: credits are computed at the requested alias's prices, whatever upstream serves it.
 */

export const ALIASES = ['svc-auto', 'svc-fast', 'svc-code', 'svc-smart'] as const;
export type Alias = (typeof ALIASES)[number];

export interface CatalogEntry {
  id: Alias;
  name: string;
  contextWindow: number;
  inputCreditsPer1k: number;
  outputCreditsPer1k: number;
  /** Output bound when the client sets no max_tokens; forwarded upstream and reserved for. */
  defaultMaxTokens: number;
  description: string;
}

export const CATALOG: Readonly<Record<Alias, CatalogEntry>> = {
  'svc-auto': {
    id: 'svc-auto',
    name: 'SVC Auto',
    contextWindow: 128_000,
    inputCreditsPer1k: 10,
    outputCreditsPer1k: 30,
    defaultMaxTokens: 4096,
    description: 'Automatic cost and intelligence optimization by prompt complexity.',
  },
  'svc-fast': {
    id: 'svc-fast',
    name: 'SVC Fast',
    contextWindow: 64_000,
    inputCreditsPer1k: 4,
    outputCreditsPer1k: 12,
    defaultMaxTokens: 2048,
    description: 'Low latency: autocomplete, classification, summarization.',
  },
  'svc-code': {
    id: 'svc-code',
    name: 'SVC Code',
    contextWindow: 128_000,
    inputCreditsPer1k: 12,
    outputCreditsPer1k: 40,
    defaultMaxTokens: 4096,
    description: 'Code generation, debugging, multi-file reasoning.',
  },
  'svc-smart': {
    id: 'svc-smart',
    name: 'SVC Smart',
    contextWindow: 128_000,
    inputCreditsPer1k: 25,
    outputCreditsPer1k: 75,
    defaultMaxTokens: 4096,
    description: 'Complex reasoning, math, multi-step planning.',
  },
};

export function isAlias(model: string): model is Alias {
  return Object.prototype.hasOwnProperty.call(CATALOG, model);
}
