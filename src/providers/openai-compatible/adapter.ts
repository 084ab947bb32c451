/**
 * ProviderAdapter for any upstream speaking OpenAI's chat-completions protocol: OpenAI itself, Ollama,
 * vLLM, llama.cpp, OpenRouter, Groq, the sandbox. Web standards only.
 */
import type { ProviderAdapter, UpstreamCall, UpstreamCompletion } from '../contract.js';
import { completionAsEvents } from '../completion-events.js';
import { continuationMessages } from '../continuation.js';
import { buildUpstreamBody, type MaxTokensField } from './request-body.js';
import { defaultMaxTokensField } from '../model-capabilities.js';
import { cancellableEvents } from './event-stream.js';
import { bodyReadFailure, fetchFailure, protocolError, readTextLimited } from '../upstream-failures.js';
import { statusError } from './upstream-errors.js';
import { parseCompletion } from './wire-parse.js';
import { httpOverFetch, type UpstreamHttp, type UpstreamReply } from '../upstream-http.js';
import type { StopSignalLike } from '../../core/stop-signal.js';

export interface OpenAICompatibleOptions {
  name: string;
  /** Up to and including the version segment: `https://api.openai.com/v1`, `http://127.0.0.1:11434/v1`. */
  baseUrl: string;
  /** Sent as a Bearer token; null for local servers that take none. */
  apiKey: string | null;
  paid: boolean;
  /** The operator's choice; unset: by model family (defaultMaxTokensField). */
  maxTokensField?: MaxTokensField | undefined;
  /** The transport; the platform's fetch when none is given (../upstream-http.ts). */
  http?: UpstreamHttp;
  extraHeaders?: Record<string, string>;
}

export function createOpenAICompatibleAdapter(options: OpenAICompatibleOptions): ProviderAdapter {
  const url = options.baseUrl.replace(/\/+$/, '') + '/chat/completions';
  const http = options.http ?? httpOverFetch(fetch);

  async function post(call: UpstreamCall, stream: boolean): Promise<UpstreamReply> {
    // The chat-completions protocol has no prefill: a continuation is asked for in words.
    const request = call.continuation
      ? { ...call.request, messages: continuationMessages(call.request.messages, call.continuation.partial) }
      : call.request;
    const maxTokensField = options.maxTokensField ?? defaultMaxTokensField(call.model);
    const body = buildUpstreamBody(request, { model: call.model, stream, maxTokensField });
    const headers: Record<string, string> = {
      ...options.extraHeaders,
      'content-type': 'application/json',
      accept: stream ? 'text/event-stream' : 'application/json',
    };
    if (options.apiKey !== null) headers.authorization = `Bearer ${options.apiKey}`;
    let response: UpstreamReply;
    try {
      response = await http(url, { headers, body: JSON.stringify(body), signal: call.signal });
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

  async function readCompletion(response: UpstreamReply, signal: StopSignalLike): Promise<UpstreamCompletion> {
    let text: string;
    try {
      text = await response.text();
    } catch (err) {
      throw bodyReadFailure(err, signal);
    }
    let payload: unknown;
    try {
      payload = JSON.parse(text);
    } catch {
      throw protocolError(`upstream sent invalid JSON: ${text.slice(0, 120)}`);
    }
    return parseCompletion(payload);
  }

  return {
    name: options.name,
    protocol: 'openai-compatible',
    paid: options.paid,

    async complete(call) {
      const response = await post(call, false);
      return readCompletion(response, call.signal);
    },

    async stream(call) {
      const response = await post(call, true);
      const type = response.headers.get('content-type') ?? '';
      // An upstream that ignores `stream: true` (or reports an error with a 200) answers with plain JSON.
      if (type.includes('application/json') || response.body === null) {
        return completionAsEvents(await readCompletion(response, call.signal));
      }
      return cancellableEvents(response.body, call.signal);
    },
  };
}

