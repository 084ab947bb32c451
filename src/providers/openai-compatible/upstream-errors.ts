/**
 * The OpenAI error envelope (`{"error":{"message","type","param","code"}}`) as upstreams send it, in a non-2xx
 * body or inside a 2xx stream, mapped onto UpstreamError with its code, param and retry hint kept (the table
 * is in docs/errors.md). The provider-neutral cases live in ../upstream-failures.ts.
 */
import type { UpstreamError } from '../contract.js';
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

/** OpenAI's codes for a parameter or value the model does not take (`max_tokens` on o1, `temperature` on o3 ...). */
const UNSUPPORTED_CODES = new Set(['unsupported_parameter', 'unsupported_value']);

/** A non-2xx status; the body is the (possibly truncated) error text the upstream sent. */
export function statusError(status: number, bodyText: string, headers?: UpstreamHeaders): UpstreamError {
  const payload = parseJson(bodyText);
  const message = envelopeMessage(payload) ?? (bodyText.trim().slice(0, 300) || `HTTP ${status}`);
  return httpStatusError(status, message, { ...detailOf(status, payload, message), retryAfterMs: retryAfterMsOf(headers) });
}

/**
 * An error object inside a 2xx answer (in a stream chunk, or as a whole JSON body). Providers put a status
 * in `code` or `status` (OpenRouter: `{"error":{"code":502}}`) or only a type (`overloaded_error`,
 * `server_error`), so both feed `retryable`.
 */
export function payloadError(payload: Record<string, unknown>): UpstreamError {
  const err = isRecord(payload.error) ? payload.error : payload;
  const status = statusOf(err.status) ?? statusOf(err.code) ?? statusOf(payload.status);
  const label = [err.type, err.code].filter((v) => typeof v === 'string').join(' ');
  const transient = /overloaded|server_error|rate_limit|unavailable|timeout/i.test(label);
  const retryable = status !== null ? isRetryableStatus(status) : transient;
  const message = envelopeMessage(payload) ?? 'upstream sent an error';
  return upstreamHttpError(`upstream error: ${message}`, status, retryable, detailOf(status ?? 400, payload, message));
}

function detailOf(status: number, payload: unknown, message: string): Partial<UpstreamErrorDetail> {
  const err = isRecord(payload) && isRecord(payload.error) ? payload.error : {};
  const code = typeof err.code === 'string' ? err.code : null;
  const type = typeof err.type === 'string' ? err.type : null;
  const param = typeof err.param === 'string' ? err.param : null;
  if (code === 'insufficient_quota' || type === 'insufficient_quota') return { code, quotaExhausted: true };
  if (status !== 400 && status !== 422) return { code, param };
  if (code === 'context_length_exceeded' || CONTEXT_TOO_LONG.test(message)) {
    return { code: 'context_length_exceeded', param: param ?? 'messages' };
  }
  if ((code !== null && UNSUPPORTED_CODES.has(code)) || UNSUPPORTED_BY_TARGET.test(message)) {
    return { code: code !== null && UNSUPPORTED_CODES.has(code) ? code : 'unsupported_parameter', param, targetSpecific: true };
  }
  return { code, param };
}

function envelopeMessage(payload: unknown): string | null {
  if (!isRecord(payload)) return null;
  const err = payload.error;
  if (typeof err === 'string') return err;
  if (isRecord(err) && typeof err.message === 'string') return err.message;
  if (typeof payload.message === 'string') return payload.message;
  return null;
}

function statusOf(value: unknown): number | null {
  const n = typeof value === 'string' && /^\d{3}$/.test(value) ? Number(value) : value;
  return typeof n === 'number' && Number.isInteger(n) && n >= 400 && n <= 599 ? n : null;
}
