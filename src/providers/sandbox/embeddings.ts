/**
 * The sandbox's embeddings: a deterministic unit vector per text (the same text always gets the same vector,
 * different texts nearly orthogonal ones), so RAG pipelines run offline and tests can compare vectors.
 * Tokens are the gateway's own estimate, as the sandbox's chat answers count them.
 */
import { estimateTextTokens } from '../../billing/token-estimate.js';
import type { EmbeddingAdapter, EmbeddingCall, EmbeddingResult } from '../../embeddings/contract.js';
import { abortedError } from '../upstream-failures.js';

export const SANDBOX_EMBEDDING_DIMENSIONS = 256;

/** FNV-1a over the UTF-16 units: a seed that differs for any two texts that differ. */
function seedOf(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h || 1;
}

export function sandboxVector(text: string, dimensions: number): number[] {
  // xorshift32 from the text's seed; values centred on 0, then scaled to unit length.
  let x = seedOf(text);
  const v = new Array<number>(dimensions);
  let norm = 0;
  for (let i = 0; i < dimensions; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    const value = x / 0xffffffff - 0.5;
    v[i] = value;
    norm += value * value;
  }
  const scale = 1 / Math.sqrt(norm);
  return v.map((value) => value * scale);
}

export function createSandboxEmbeddingAdapter(name = 'sandbox'): EmbeddingAdapter {
  return {
    name,
    paid: false,
    embed(call: EmbeddingCall): Promise<EmbeddingResult> {
      if (call.signal.aborted) return Promise.reject(abortedError(call.signal));
      const dimensions = call.dimensions ?? SANDBOX_EMBEDDING_DIMENSIONS;
      return Promise.resolve({
        vectors: call.inputs.map((t) => sandboxVector(t, dimensions)),
        promptTokens: call.inputs.reduce((sum, t) => sum + estimateTextTokens(t), 0),
      });
    },
  };
}
