/**
 * Anthropic's error envelope (`{"type":"error","error":{"type","message"},"request_id"}`), in a non-2xx body or
 * as an `event: error` inside a 2xx stream, mapped onto UpstreamError. The provider-neutral cases (refused,
 * reset, aborted, cut) live in ../upstream-failures.ts.
 */
import { UpstreamError } from '../contract.js';
import {
  CONTEXT_TOO_LONG,
  httpStatusError,
  isRecord,
  parseJson,
  retryAfterMsOf,
  UNSUPPORTED_BY_TARGET,
  upstreamHttpError,
  type UpstreamErrorDetail,
} from '../upstream-failures.js';
import type { UpstreamHeaders } from '../upstream-http.js';

/**
 * The HTTP status each documented error type stands for (API reference, "Errors"). A stream that already
 * answered 200 can only name the type, so this is how a mid-stream `overloaded_error` still reaches failover
 * as the 529 it would have been before the first byte.
 */
const STATUS_BY_TYPE: Readonly<Record<string, number>> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  overloaded_error: 529,
};

export interface AnthropicErrorBody {
  type: string | null;
  message: string | null;
  requestId: string | null;
}

export function parseErrorBody(payload: unknown): AnthropicErrorBody | null {
  if (!isRecord(payload)) return null;
  const err = payload.error;
  if (!isRecord(err)) return null;
  return {
    type: typeof err.type === 'string' ? err.type : null,
    message: typeof err.message === 'string' ? err.message : null,
    requestId: typeof payload.request_id === 'string' ? payload.request_id : null,
  };
}

/** A non-2xx status; the body is the (possibly truncated) text the upstream sent; `retry-after` rides in the headers. */
export function statusError(status: number, bodyText: string, headers?: UpstreamHeaders): UpstreamError {
  const body = parseErrorBody(parseJson(bodyText));
  const described = body ? describe(body) : null;
  const detail = detailOf(status, body);
  // An empty account's 400 is billing_error's 402 by another name: failover goes on, as for a 402.
  const effective = status === 400 && detail.quotaExhausted === true ? 402 : status;
  return httpStatusError(effective, described ?? (bodyText.trim().slice(0, 300) || `HTTP ${status}`), {
    ...detail,
    retryAfterMs: retryAfterMsOf(headers),
  });
}

/**
 * An error envelope after a 2xx: an `event: error` mid-stream, or a JSON body saying `"type":"error"`. The
 * status comes from the error type; an unknown type keeps status null and stays retryable, since one
 * provider's unexplained failure is not another's.
 */
export function payloadError(payload: Record<string, unknown>): UpstreamError {
  const body = parseErrorBody(payload);
  const status = body?.type ? (STATUS_BY_TYPE[body.type] ?? null) : null;
  const message = (body ? describe(body) : null) ?? 'upstream sent an error event';
  if (status !== null) return httpStatusError(status, message, detailOf(status, body));
  return upstreamHttpError(`upstream error: ${message}`, null, true);
}

/**
 * Anthropic's 400s carry no code: its words say which are about the request (OpenAI's
 * `context_length_exceeded`) and which about this model ("`temperature` and `top_p` cannot both be specified
 * for this model", "does not support"), which another target may accept.
 */
function detailOf(status: number, body: AnthropicErrorBody | null): Partial<UpstreamErrorDetail> {
  if (body?.type === 'billing_error') return { code: 'insufficient_quota', quotaExhausted: true };
  if (status !== 400 || body?.type !== 'invalid_request_error') return {};
  const message = body.message ?? '';
  // An empty Anthropic account answers 400 invalid_request_error ("Your credit balance is too low to access
  // the Anthropic API"): the operator's account, not the request. Another target may serve it.
  if (/credit balance is too low/i.test(message)) return { code: 'insufficient_quota', quotaExhausted: true };
  if (CONTEXT_TOO_LONG.test(message)) return { code: 'context_length_exceeded', param: 'messages' };
  if (UNSUPPORTED_BY_TARGET.test(message) || /cannot both be specified|extra inputs are not permitted/i.test(message)) {
    return { code: 'unsupported_parameter', param: leadingField(message), targetSpecific: true };
  }
  return {};
}

/** Anthropic names the offending field first ("temperature: Extra inputs are not permitted"); OpenAI calls it param. */
function leadingField(message: string): string | null {
  const m = /^`?([a-z_]+)`?:/.exec(message) ?? /^`([a-z_]+)`/.exec(message);
  return m?.[1] ?? null;
}

/**
 * Models from Claude 4.6 on answer a trailing assistant turn with this 400 ("This model does not support
 * assistant message prefill. The conversation must end with a user message."). The type pins it to a request
 * error and the word to the prefill, so another 400 (a bad image, an unknown model) is never mistaken for it.
 */
export function isPrefillRefusal(status: number, bodyText: string): boolean {
  if (status !== 400) return false;
  const body = parseErrorBody(parseJson(bodyText));
  return body?.type === 'invalid_request_error' && /prefill/i.test(body.message ?? '');
}

function describe(body: AnthropicErrorBody): string | null {
  if (body.type === null && body.message === null) return null;
  const text = [body.type, body.message].filter((s): s is string => s !== null).join(': ');
  return body.requestId ? `${text} (request_id ${body.requestId})` : text;
}

/**
 * The request asks for something the Messages API cannot do. Refused before any call rather than sent as a
 * silently different request; failover may try a provider that can, and when none can the client gets a
 * clear 400.
 */
export function requestRefused(reason: string): UpstreamError {
  return new UpstreamError('unsupported', `the Anthropic Messages API cannot serve this request: ${reason}`);
}
