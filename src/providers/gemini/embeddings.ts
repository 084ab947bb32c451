/**
 * Embeddings from Gemini (`models/{model}:batchEmbedContents`): one request per batch, one content per input.
 * Gemini reports no token count for embeddings: the door charges its own estimate of the input.
 */
import { validVectors, type EmbeddingAdapter, type EmbeddingCall, type EmbeddingResult } from '../../embeddings/contract.js';
import { bodyReadFailure, fetchFailure, isRecord, parseJson, protocolError, readTextLimited } from '../upstream-failures.js';
import { modelPath } from './adapter.js';
import { statusError } from './errors.js';
import { httpOverFetch, type UpstreamHttp, type UpstreamReply } from '../upstream-http.js';

export interface GeminiEmbeddingOptions {
  name: string;
  baseUrl: string;
  apiKey: string | null;
  paid: boolean;
  /** The transport; the platform's fetch when none is given (../upstream-http.ts). */
  http?: UpstreamHttp;
  extraHeaders?: Record<string, string>;
}

const ANSWER_LIMIT = 256 * 1024 * 1024;

const GEMINI_BATCH = 100;

export function createGeminiEmbeddingAdapter(options: GeminiEmbeddingOptions): EmbeddingAdapter {
  const base = options.baseUrl.replace(/\/+$/, '');
  const http = options.http ?? httpOverFetch(fetch);

  async function batch(call: EmbeddingCall, inputs: readonly string[]): Promise<number[][]> {
    const model = modelPath(call.model);
    const body = {
      requests: inputs.map((text) => ({
        model: decodeURIComponent(model),
        content: { parts: [{ text }] },
        ...(call.dimensions !== null ? { outputDimensionality: call.dimensions } : {}),
      })),
    };
    const headers: Record<string, string> = { ...options.extraHeaders, 'content-type': 'application/json', accept: 'application/json' };
    if (options.apiKey !== null) headers['x-goog-api-key'] = options.apiKey;
    let response: UpstreamReply;
    try {
      response = await http(`${base}/${model}:batchEmbedContents`, { headers, body: JSON.stringify(body), signal: call.signal });
    } catch (err) {
      throw fetchFailure(err, call.signal);
    }
    const text = await readTextLimited(response, response.ok ? ANSWER_LIMIT : undefined).catch((err: unknown) => {
      throw bodyReadFailure(err, call.signal);
    });
    if (!response.ok) throw statusError(response.status, text, response.headers);
    const payload = parseJson(text);
    if (!isRecord(payload) || !Array.isArray(payload.embeddings)) throw protocolError('batchEmbedContents answer without embeddings');
    const vectors = payload.embeddings.map((e) => (isRecord(e) ? e.values : undefined));
    if (!validVectors(vectors, inputs.length)) throw protocolError(`batchEmbedContents answer does not hold ${inputs.length} float vectors`);
    return vectors;
  }

  return {
    name: options.name,
    paid: options.paid,
    async embed(call: EmbeddingCall): Promise<EmbeddingResult> {
      // batchEmbedContents takes at most 100 contents: larger inputs go in consecutive batches.
      const vectors: number[][] = [];
      for (let from = 0; from < call.inputs.length; from += GEMINI_BATCH) {
        vectors.push(...(await batch(call, call.inputs.slice(from, from + GEMINI_BATCH))));
      }
      return { vectors, promptTokens: null };
    },
  };
}
