import type { CatalogEntry } from '../routing/catalog.js';

/** cost = ceil((prompt x input_per_1k + completion x output_per_1k) / 1000), in integer credits. */
export function creditCost(entry: CatalogEntry, promptTokens: number, completionTokens: number): number {
  return Math.ceil((promptTokens * entry.inputCreditsPer1k + completionTokens * entry.outputCreditsPer1k) / 1000);
}
