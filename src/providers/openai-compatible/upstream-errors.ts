/**
 * The OpenAI error envelope (`{"error":{"message","type","code"}}`) as upstreams send it, in a non-2xx body or
 * inside a 2xx stream, mapped onto UpstreamError. The provider-neutral cases live in ../upstream-failures.ts.
 */
import { UpstreamError } from '../contract.js';
import { httpStatusError, isRecord, isRetryableStatus, parseJson } from '../upstream-failures.js';

/** A non-2xx status; the body is the (possibly truncated) error text the upstream sent. */
export function statusError(status: number, bodyText: string): UpstreamError {
  const message = envelopeMessage(parseJson(bodyText)) ?? (bodyText.trim().slice(0, 300) || `HTTP ${status}`);
  return httpStatusError(status, message);
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
  return new UpstreamError('http', `upstream error: ${message}`, status, retryable);
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
