/**
 * ProviderAdapter for Anthropic's Messages API (`POST {baseUrl}/messages`). Web standards only.
 *
 * API versions (the `anthropic-version` header):
 * - `2026-10-21`, the newest: the key goes as `Authorization: Bearer`, as Anthropic's SDKs send it from that
 *   version on, and sampling parameters are refused, so none are sent (./request-body.ts).
 * - `2023-06-01`: the key goes as `x-api-key`; temperature (0..1) and top_p are accepted.
 */
import type { ProviderAdapter, UpstreamCall, UpstreamCompletion } from '../contract.js';
import { completionAsEvents } from '../completion-events.js';
import { continuationMessages } from '../continuation.js';
import { bodyReadFailure, fetchFailure, protocolError, readTextLimited } from '../upstream-failures.js';
import { isPrefillRefusal, statusError } from './errors.js';
import { PrefillEcho, planPrefill } from './prefill.js';
import { buildMessagesBody, type AnthropicApiVersion } from './request-body.js';
import { parseMessage } from './response-parse.js';
import { cancellableEvents } from './stream-events.js';
import { httpOverFetch, type UpstreamHttp, type UpstreamReply } from '../upstream-http.js';
import type { StopSignalLike } from '../../core/stop-signal.js';

export type { AnthropicApiVersion } from './request-body.js';

export const DEFAULT_ANTHROPIC_BASE_URL = 'https://api.anthropic.com/v1';
export const DEFAULT_ANTHROPIC_API_VERSION: AnthropicApiVersion = '2026-10-21';

export interface AnthropicOptions {
  name: string;
  /** Up to and including the version segment, e.g. `https://api.anthropic.com/v1`; `/messages` is appended. */
  baseUrl: string;
  /** Null for a local proxy that adds the key itself. */
  apiKey: string | null;
  apiVersion: AnthropicApiVersion;
  paid: boolean;
  /** The transport; the platform's fetch when none is given (../upstream-http.ts). */
  http?: UpstreamHttp;
  /** E.g. `anthropic-beta`; the adapter's own headers win over these. */
  extraHeaders?: Record<string, string>;
}

/** How the call's request was sent: with the continuation's echo to trim when it went as a prefill. */
interface Sent {
  response: UpstreamReply;
  echo: PrefillEcho | null;
}

export function createAnthropicAdapter(options: AnthropicOptions): ProviderAdapter {
  const url = options.baseUrl.replace(/\/+$/, '') + '/messages';
  const http = options.http ?? httpOverFetch(fetch);
  /**
   * Models seen refusing a prefill. Claude 4.6 and later answer a trailing assistant turn with a 400; their
   * continuations go as an instruction instead (../continuation.ts), and after the first refusal straight away.
   */
  const refusesPrefill = new Set<string>();

  function headers(stream: boolean): Record<string, string> {
    const h: Record<string, string> = {
      ...options.extraHeaders,
      'content-type': 'application/json',
      accept: stream ? 'text/event-stream' : 'application/json',
      'anthropic-version': options.apiVersion,
    };
    if (options.apiKey !== null) {
      if (options.apiVersion === '2023-06-01') h['x-api-key'] = options.apiKey;
      else h.authorization = `Bearer ${options.apiKey}`;
    }
    return h;
  }

  async function send(call: UpstreamCall, stream: boolean, body: Record<string, unknown>): Promise<UpstreamReply> {
    try {
      return await http(url, { headers: headers(stream), body: JSON.stringify(body), signal: call.signal });
    } catch (err) {
      throw fetchFailure(err, call.signal);
    }
  }

  async function errorText(response: UpstreamReply, signal: StopSignalLike): Promise<string> {
    return readTextLimited(response).catch((err: unknown) => {
      throw bodyReadFailure(err, signal);
    });
  }

  async function post(call: UpstreamCall, stream: boolean): Promise<Sent> {
    const bodyOptions = { model: call.model, stream, apiVersion: options.apiVersion };
    const partial = call.continuation?.partial;
    if (partial !== undefined && !refusesPrefill.has(call.model)) {
      const prefill = planPrefill(partial);
      const response = await send(call, stream, buildMessagesBody(call.request, { ...bodyOptions, prefill: prefill.text }));
      if (response.ok) return { response, echo: new PrefillEcho(prefill.heldBack) };
      const text = await errorText(response, call.signal);
      if (!isPrefillRefusal(response.status, text)) throw statusError(response.status, text, response.headers);
      // Nothing was delivered from this attempt, so asking again in words is invisible to the client.
      refusesPrefill.add(call.model);
    }
    const request =
      partial !== undefined ? { ...call.request, messages: continuationMessages(call.request.messages, partial) } : call.request;
    const response = await send(call, stream, buildMessagesBody(request, { ...bodyOptions, prefill: null }));
    if (!response.ok) throw statusError(response.status, await errorText(response, call.signal), response.headers);
    return { response, echo: null };
  }

  async function readCompletion({ response, echo }: Sent, signal: StopSignalLike): Promise<UpstreamCompletion> {
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
    return parseMessage(payload, echo);
  }

  return {
    name: options.name,
    protocol: 'anthropic',
    paid: options.paid,

    async complete(call) {
      return readCompletion(await post(call, false), call.signal);
    },

    async stream(call) {
      const sent = await post(call, true);
      const type = sent.response.headers.get('content-type') ?? '';
      // A proxy that ignores `stream: true` (or reports an error with a 200) answers with plain JSON.
      if (type.includes('application/json') || sent.response.body === null) {
        return completionAsEvents(await readCompletion(sent, call.signal));
      }
      return cancellableEvents(sent.response.body, call.signal, sent.echo);
    },
  };
}
