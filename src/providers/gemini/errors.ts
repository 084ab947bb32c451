/**
 * Gemini's error envelope (`{"error":{"code":429,"message":"...","status":"RESOURCE_EXHAUSTED"}}`, the
 * google.rpc.Status shape), in a non-2xx body or inside a 2xx stream, mapped onto UpstreamError; plus the two
 * refusals this adapter makes itself. The provider-neutral cases live in ../upstream-failures.ts.
 */
import { UpstreamError } from '../contract.js';
import {
  CONTEXT_TOO_LONG,
  httpStatusError,
  isRecord,
  isRetryableStatus,
  parseJson,
  retryAfterMsOf,
  UNSUPPORTED_BY_TARGET,
  upstreamHttpError,
  type UpstreamErrorDetail,
} from '../upstream-failures.js';
import type { UpstreamHeaders } from '../upstream-http.js';

/**
 * google.rpc.Code names -> the HTTP status Google maps them to, for an in-stream error whose numeric `code`
 * is missing or not an HTTP status.
 */
const STATUS_OF_CODE: Readonly<Record<string, number>> = {
  INVALID_ARGUMENT: 400,
  FAILED_PRECONDITION: 400,
  OUT_OF_RANGE: 400,
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  ABORTED: 409,
  ALREADY_EXISTS: 409,
  RESOURCE_EXHAUSTED: 429,
  CANCELLED: 499,
  INTERNAL: 500,
  UNKNOWN: 500,
  DATA_LOSS: 500,
  NOT_IMPLEMENTED: 501,
  UNAVAILABLE: 503,
  DEADLINE_EXCEEDED: 504,
};

/**
 * A non-2xx status; the body is the (possibly truncated) error text the upstream sent. Gemini says how long to
 * wait in the body (a google.rpc.RetryInfo detail), rarely in a `retry-after` header; either is kept.
 */
export function statusError(status: number, bodyText: string, headers?: UpstreamHeaders): UpstreamError {
  const envelope = errorEnvelope(parseJson(bodyText));
  const message = envelope ? describe(envelope) : bodyText.trim().slice(0, 300) || `HTTP ${status}`;
  const detail = envelope ? detailOf(status, envelope) : {};
  // Gemini answers a bad API key with 400 INVALID_ARGUMENT: the operator's fault, not the request's. As a
  // 401 it fails over to the next target and counts against this one's health, instead of ending the request.
  const effective = envelope !== null && status === 400 && badApiKey(envelope) ? 401 : status;
  return httpStatusError(effective, message, { ...detail, retryAfterMs: detail.retryAfterMs ?? retryAfterMsOf(headers) });
}

/**
 * An error object inside a 2xx answer (a stream event, or a whole JSON body). Its code becomes the status,
 * so failover treats an in-stream 503 like a 503 answer: another target may succeed.
 */
export function payloadError(envelope: Record<string, unknown>): UpstreamError {
  const status = httpStatusOf(envelope);
  const retryable = status !== null ? isRetryableStatus(status) : true;
  return upstreamHttpError(`upstream error: ${describe(envelope)}`, status, retryable, status === null ? {} : detailOf(status, envelope));
}

/**
 * INVALID_ARGUMENT carries no finer code: its words tell a prompt over the window ("The input token count
 * (1200000) exceeds the maximum number of tokens allowed (1048576)") from a feature this model lacks
 * ("Function calling is not enabled for models/gemma-3-27b-it"), which another target may have.
 */
function detailOf(status: number, envelope: Record<string, unknown>): Partial<UpstreamErrorDetail> {
  const retryAfterMs = retryDelayMs(envelope.details);
  if (status !== 400) return { retryAfterMs };
  const message = typeof envelope.message === 'string' ? envelope.message : '';
  if (CONTEXT_TOO_LONG.test(message)) return { code: 'context_length_exceeded', param: 'messages' };
  if (UNSUPPORTED_BY_TARGET.test(message) || /is not enabled for|unknown name/i.test(message)) {
    return { code: 'unsupported_parameter', targetSpecific: true };
  }
  return {};
}

/** `API_KEY_INVALID` in a google.rpc.ErrorInfo detail, or its message where a proxy dropped the details. */
function badApiKey(envelope: Record<string, unknown>): boolean {
  const details = Array.isArray(envelope.details) ? envelope.details : [];
  if (details.some((d) => isRecord(d) && d.reason === 'API_KEY_INVALID')) return true;
  return typeof envelope.message === 'string' && /API key not valid/i.test(envelope.message);
}

/** google.rpc.RetryInfo's `retryDelay`, a protobuf Duration in JSON ("37s", "0.250s"), in milliseconds. */
function retryDelayMs(details: unknown): number | null {
  if (!Array.isArray(details)) return null;
  for (const d of details) {
    if (!isRecord(d) || typeof d['@type'] !== 'string' || !d['@type'].endsWith('google.rpc.RetryInfo')) continue;
    const m = typeof d.retryDelay === 'string' ? /^(\d+(?:\.\d+)?)s$/.exec(d.retryDelay) : null;
    if (m) return Math.ceil(Number(m[1]) * 1000);
  }
  return null;
}

/** The `error` object of a payload, when it is one; streamed errors may also come wrapped in a JSON array. */
export function errorEnvelope(payload: unknown): Record<string, unknown> | null {
  const value = Array.isArray(payload) && payload.length === 1 ? payload[0] : payload;
  if (!isRecord(value) || !isRecord(value.error)) return null;
  return value.error;
}

/**
 * The request asks for something this adapter cannot express in Gemini's protocol. Refused before any call;
 * failover may try a provider that can, and when none can the client gets a clear 400.
 */
export function untranslatable(message: string): UpstreamError {
  return new UpstreamError('unsupported', `gemini adapter cannot send this request: ${message}`);
}

/**
 * Gemini refused the prompt itself (`promptFeedback.blockReason`, no candidates): a 400, as OpenAI-style
 * services answer a prompt their content filter rejects; nothing was generated.
 */
export function promptBlocked(reason: string, message: string | null): UpstreamError {
  const detail = message ? `: ${message}` : '';
  // Azure OpenAI's code for a prompt its filter refused: the nearest OpenAI-family name.
  return upstreamHttpError(`upstream blocked the prompt (${reason})${detail}`, 400, false, { code: 'content_filter', param: 'messages' });
}

function httpStatusOf(envelope: Record<string, unknown>): number | null {
  const code = envelope.code;
  if (typeof code === 'number' && Number.isInteger(code) && code >= 400 && code <= 599) return code;
  return typeof envelope.status === 'string' ? (STATUS_OF_CODE[envelope.status] ?? null) : null;
}

function describe(envelope: Record<string, unknown>): string {
  const message = typeof envelope.message === 'string' && envelope.message.length > 0 ? envelope.message : 'no message';
  return typeof envelope.status === 'string' ? `${envelope.status}: ${message}` : message;
}
