/**
 * ProviderAdapter for the Google Gemini API (v1beta `generateContent` and `streamGenerateContent?alt=sse`).
 * Web standards only.
 */
import type { ProviderAdapter, UpstreamCall, UpstreamCompletion } from '../contract.js';
import { bodyReadFailure, fetchFailure, protocolError, readTextLimited } from '../upstream-failures.js';
import { statusError } from './errors.js';
import { buildGeminiBody } from './request-body.js';
import { parseCompletion } from './response-parse.js';
import { answerEvents, cancellableEvents } from './stream-events.js';
import { httpOverFetch, type UpstreamHttp, type UpstreamReply } from '../upstream-http.js';
import type { StopSignalLike } from '../../core/stop-signal.js';

export interface GeminiOptions {
  name: string;
  /** Up to and including the version segment; Google's is `https://generativelanguage.googleapis.com/v1beta`. */
  baseUrl: string;
  /** Sent as `x-goog-api-key`, never as `?key=`, so it cannot end up in URL logs; null for keyless proxies. */
  apiKey: string | null;
  paid: boolean;
  /** The transport; the platform's fetch when none is given (../upstream-http.ts). */
  http?: UpstreamHttp;
  extraHeaders?: Record<string, string>;
}

export function createGeminiAdapter(options: GeminiOptions): ProviderAdapter {
  const base = options.baseUrl.replace(/\/+$/, '');
  const http = options.http ?? httpOverFetch(fetch);

  async function post(call: UpstreamCall, stream: boolean): Promise<UpstreamReply> {
    const body = buildGeminiBody(call);
    const method = stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
    const headers: Record<string, string> = {
      ...options.extraHeaders,
      'content-type': 'application/json',
      accept: stream ? 'text/event-stream' : 'application/json',
    };
    if (options.apiKey !== null) headers['x-goog-api-key'] = options.apiKey;
    let response: UpstreamReply;
    try {
      response = await http(`${base}/${modelPath(call.model)}:${method}`, { headers, body: JSON.stringify(body), signal: call.signal });
    } catch (err) {
      throw fetchFailure(err, call.signal);
    }
    if (!response.ok) {
      const text = await readTextLimited(response).catch((err: unknown) => {
        throw bodyReadFailure(err, call.signal);
      });
      throw statusError(response.status, text, response.headers);
    }
    return response;
  }

  async function readJson(response: UpstreamReply, signal: StopSignalLike): Promise<unknown> {
    let text: string;
    try {
      text = await response.text();
    } catch (err) {
      throw bodyReadFailure(err, signal);
    }
    try {
      return JSON.parse(text);
    } catch {
      throw protocolError(`upstream sent invalid JSON: ${text.slice(0, 120)}`);
    }
  }

  return {
    name: options.name,
    protocol: 'gemini',
    paid: options.paid,

    async complete(call): Promise<UpstreamCompletion> {
      const response = await post(call, false);
      return parseCompletion(await readJson(response, call.signal));
    },

    async stream(call) {
      const response = await post(call, true);
      const type = response.headers.get('content-type') ?? '';
      // Without `alt=sse` honoured (a proxy dropping the query), Gemini answers a JSON array of the chunks.
      if (type.includes('application/json') || response.body === null) {
        const payload = await readJson(response, call.signal);
        return answerEvents([Array.isArray(payload) ? payload : [payload]], call.signal);
      }
      return cancellableEvents(response.body, call.signal);
    },
  };
}

/**
 * `models/{model}`, or the name as given when it already names a resource (`tunedModels/...`); each segment is
 * escaped so a configured name cannot reshape the URL.
 */
/** `models/<id>` (or a tuned model's path), each segment escaped. */
export function modelPath(model: string): string {
  const path = model.startsWith('models/') || model.startsWith('tunedModels/') ? model : `models/${model}`;
  return path.split('/').map(encodeURIComponent).join('/');
}
