import type { CatalogEntry } from '../routing/catalog.js';

/** cost = ceil((prompt x input_per_1k + completion x output_per_1k) / 1000), in integer credits. */
export function creditCost(
  prices: Pick<CatalogEntry, 'inputCreditsPer1k' | 'outputCreditsPer1k'>,
  promptTokens: number,
  completionTokens: number,
): number {
  return Math.ceil((promptTokens * prices.inputCreditsPer1k + completionTokens * prices.outputCreditsPer1k) / 1000);
}
