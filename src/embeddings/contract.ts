/**
 * What an embedding target does: one call turns a batch of texts into one vector each. Adapters live beside
 * their chat adapters (src/providers/<protocol>/embeddings.ts) and fail with the same UpstreamErrors, so
 * failover and the errors table treat them alike.
 */
export interface EmbeddingCall {
  model: string;
  inputs: readonly string[];
  /** Vector size asked for (OpenAI `dimensions`, Gemini `outputDimensionality`); null: the model's own. */
  dimensions: number | null;
  user: string | null;
  signal: AbortSignal;
}

export interface EmbeddingResult {
  /** One vector per input, in input order. */
  vectors: number[][];
  /** Input tokens as the upstream counted them, or null when it does not say (Gemini). */
  promptTokens: number | null;
}

export interface EmbeddingAdapter {
  /** The provider's configured name (`routed_provider`). */
  readonly name: string;
  /** Whether calls cost money: test keys are served by free (sandbox) providers only. */
  readonly paid: boolean;
  embed(call: EmbeddingCall): Promise<EmbeddingResult>;
}

/** Checks an upstream's vectors: as many as inputs, each a non-empty list of finite numbers. */
export function validVectors(vectors: unknown, count: number): vectors is number[][] {
  return (
    Array.isArray(vectors) &&
    vectors.length === count &&
    vectors.every((v) => Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'number' && Number.isFinite(x)))
  );
}
