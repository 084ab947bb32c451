/**
 * Embeddings from an upstream speaking OpenAI's `POST /embeddings` (OpenAI, Ollama, vLLM, TEI, Voyage's
 * OpenAI-compatible endpoint, the sandbox server). Vectors are asked for as floats, whatever the client
 * wants: the door encodes them (base64) itself, so every target answers alike.
 */
import { validVectors, type EmbeddingAdapter, type EmbeddingCall, type EmbeddingResult } from '../../embeddings/contract.js';
import { bodyReadFailure, fetchFailure, isRecord, parseJson, protocolError, readTextLimited } from '../upstream-failures.js';
import { statusError } from './upstream-errors.js';
import { httpOverFetch, type UpstreamHttp, type UpstreamReply } from '../upstream-http.js';

export interface OpenAICompatibleEmbeddingOptions {
  name: string;
  baseUrl: string;
  apiKey: string | null;
  paid: boolean;
  /** The transport; the platform's fetch when none is given (../upstream-http.ts). */
  http?: UpstreamHttp;
  extraHeaders?: Record<string, string>;
}

/** The largest answer read: 2,048 inputs of 3,072 floats as JSON text stay well under it. */
const ANSWER_LIMIT = 256 * 1024 * 1024;

export function createOpenAICompatibleEmbeddingAdapter(options: OpenAICompatibleEmbeddingOptions): EmbeddingAdapter {
  const url = options.baseUrl.replace(/\/+$/, '') + '/embeddings';
  const http = options.http ?? httpOverFetch(fetch);
  return {
    name: options.name,
    paid: options.paid,
    async embed(call: EmbeddingCall): Promise<EmbeddingResult> {
      const body: Record<string, unknown> = { model: call.model, input: call.inputs, encoding_format: 'float' };
      if (call.dimensions !== null) body.dimensions = call.dimensions;
      if (call.user !== null) body.user = call.user;
      const headers: Record<string, string> = { ...options.extraHeaders, 'content-type': 'application/json', accept: 'application/json' };
      if (options.apiKey !== null) headers.authorization = `Bearer ${options.apiKey}`;
      let response: UpstreamReply;
      try {
        response = await http(url, { headers, body: JSON.stringify(body), signal: call.signal });
      } catch (err) {
        throw fetchFailure(err, call.signal);
      }
      const text = await readTextLimited(response, response.ok ? ANSWER_LIMIT : undefined).catch((err: unknown) => {
        throw bodyReadFailure(err, call.signal);
      });
      if (!response.ok) throw statusError(response.status, text, response.headers);
      const payload = parseJson(text);
      if (!isRecord(payload) || !Array.isArray(payload.data)) throw protocolError('embeddings answer without a data list');
      const rows = [...payload.data].filter(isRecord).sort((a, b) => Number(a.index ?? 0) - Number(b.index ?? 0));
      const vectors = rows.map((r) => r.embedding);
      if (!validVectors(vectors, call.inputs.length)) throw protocolError(`embeddings answer does not hold ${call.inputs.length} float vectors`);
      const usage = isRecord(payload.usage) ? payload.usage.prompt_tokens : undefined;
      const promptTokens = typeof usage === 'number' && Number.isSafeInteger(usage) && usage >= 0 ? usage : null;
      return { vectors, promptTokens };
    },
  };
}
