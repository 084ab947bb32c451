/** OpenAI's response and chunk objects, field for field, as the sandbox server writes them. */
import type { ChunkDelta, FinishReason } from '../../openai/chat-types.js';
import type { UpstreamTokens } from '../contract.js';
import type { SimulatedCompletion } from './simulator.js';

export interface ResponseMeta {
  id: string;
  created: number;
  model: string;
}

const FINGERPRINT = 'fp_sandbox';

export function newResponseMeta(model: string): ResponseMeta {
  return { id: `chatcmpl-${crypto.randomUUID().replace(/-/g, '')}`, created: Math.floor(Date.now() / 1000), model };
}

export function completionObject(sim: SimulatedCompletion, meta: ResponseMeta): object {
  return {
    id: meta.id,
    object: 'chat.completion',
    created: meta.created,
    model: meta.model,
    choices: [{ index: 0, message: { ...sim.message, annotations: [] }, logprobs: null, finish_reason: sim.finishReason }],
    usage: usageObject(sim.usage),
    service_tier: 'default',
    system_fingerprint: FINGERPRINT,
  };
}

/** With include_usage, OpenAI sends `"usage": null` on every chunk and the totals in one last chunk. */
export function chunkObject(meta: ResponseMeta, delta: ChunkDelta, finishReason: FinishReason | null, includeUsage: boolean): object {
  const chunk = {
    id: meta.id,
    object: 'chat.completion.chunk',
    created: meta.created,
    model: meta.model,
    service_tier: 'default',
    system_fingerprint: FINGERPRINT,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  };
  return includeUsage ? { ...chunk, usage: null } : chunk;
}

export function usageChunkObject(meta: ResponseMeta, usage: UpstreamTokens): object {
  return {
    id: meta.id,
    object: 'chat.completion.chunk',
    created: meta.created,
    model: meta.model,
    service_tier: 'default',
    system_fingerprint: FINGERPRINT,
    choices: [],
    usage: usageObject(usage),
  };
}

/** The start of a chunk, cut off mid-value: what a corrupted upstream frame looks like. */
export function malformedChunkText(meta: ResponseMeta): string {
  return `{"id":"${meta.id}","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":`;
}

function usageObject(u: UpstreamTokens): object {
  return {
    prompt_tokens: u.promptTokens,
    completion_tokens: u.completionTokens,
    total_tokens: u.promptTokens + u.completionTokens,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}
