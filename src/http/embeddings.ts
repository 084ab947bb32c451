/**
 * POST /v1/embeddings: the embedding aliases of the configuration (`embeddings:`), for RAG in open-webui,
 * Continue's indexing, LlamaIndex and the Vercel AI SDK's `embed`. Authenticated, rate-limited, held, routed
 * with failover, settled once and reported in /v1/usage like a completion (src/embeddings/embedding-job.ts).
 */
import { Hono } from 'hono';
import type { AppEnv } from '../core/deps.js';
import { newTimeOrderedId } from '../core/ids.js';
import { completionError } from '../completions/upstream-errors.js';
import { runEmbedding, estimateEmbeddingTokens } from '../embeddings/embedding-job.js';
import { parseEmbeddingRequest } from '../embeddings/embedding-request.js';
import type { SvcMetadata } from '../openai/chat-types.js';
import { GatewayError, notFound } from '../openai/errors.js';
import { admitRate } from '../ratelimit/admit.js';
import { readJson } from './json-body.js';

/** OpenAI's base64 form: the vector as little-endian float32, base64-encoded. */
export function base64Vector(vector: readonly number[]): string {
  const bytes = new Uint8Array(vector.length * 4);
  const view = new DataView(bytes.buffer);
  vector.forEach((x, i) => view.setFloat32(i * 4, x, true));
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

export const embeddingsRoutes = new Hono<AppEnv>().post('/', async (c) => {
  const deps = c.get('deps');
  const key = c.get('key');
  const request = parseEmbeddingRequest(await readJson(c));
  const route = deps.embeddings?.get(request.model);
  if (route === undefined) {
    const known = [...(deps.embeddings?.keys() ?? [])];
    throw notFound(
      'model_not_found',
      known.length === 0
        ? `The model '${request.model}' does not exist: this gateway serves no embedding model.`
        : `The model '${request.model}' does not exist. Embedding models: ${known.join(', ')}.`,
      'model',
    );
  }
  const observation = c.get('observation');
  if (observation !== undefined) observation.alias = route.alias;
  const estimate = estimateEmbeddingTokens(request.inputs);
  const rateHeaders = await admitRate(deps.rateLimiting, key, { promptTokens: estimate, maxOutputTokens: 0 }, {
    findKey: (id) => deps.store.keys.findKey(id),
    retryDelaysMs: deps.limits.ledgerRetryDelaysMs,
  });
  const clientSignal = c.req.raw.signal;
  const done = await runEmbedding(deps, {
    key,
    request,
    route,
    requestId: c.get('requestId'),
    holdId: newTimeOrderedId('hold_'),
    estimate,
    clientSignal,
  }).catch((e: unknown) => {
    const error = completionError({ abortedEnding: () => (clientSignal.aborted ? 'client_closed' : 'upstream_error') }, e);
    // The completion doors' wording names `messages` for an input too long; here the input is `input`.
    if (error instanceof GatewayError && error.param === 'messages') {
      throw new GatewayError(error.status, error.type, error.code, error.message, 'input', error.headers);
    }
    throw error;
  });
  const provider = done.target.adapter.name;
  observation?.holdEnded(
    {
      alias: route.alias,
      provider,
      model: done.target.model,
      promptTokens: done.promptTokens,
      completionTokens: 0,
      credits: done.outcome?.charged ?? done.credits,
      attempts: done.attempts.length,
      ending: 'completed',
      holdId: done.holdId,
      settlementPending: done.outcome === null,
    },
    { voided: false, shortfallCredits: done.shortfallCredits },
  );
  const svc: SvcMetadata = {
    requested_model: route.alias,
    routed_model: `${provider}/${done.target.model}`,
    routed_provider: provider,
    credits_used: done.outcome?.charged ?? done.credits,
    balance_remaining: done.outcome?.balanceRemaining ?? null,
    tokens_metered: { prompt: done.promptTokens, completion: 0, total: done.promptTokens },
    latency_ms: done.latencyMs,
  };
  if (done.outcome === null) svc.settlement = 'pending';
  if (done.attempts.length > 1) svc.attempts = done.attempts;
  const data = done.result.vectors.map((v, index) => ({
    object: 'embedding' as const,
    index,
    embedding: request.encodingFormat === 'base64' ? base64Vector(v) : v,
  }));
  return c.json(
    { object: 'list', data, model: route.alias, usage: { prompt_tokens: done.promptTokens, total_tokens: done.promptTokens }, svc },
    200,
    rateHeaders,
  );
});
