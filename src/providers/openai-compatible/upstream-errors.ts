/**
 * Maps every way an OpenAI-compatible call can fail onto UpstreamError, so failover decides on `kind`,
 * `status` and `retryable` and never on message text.
 */
import { UpstreamError } from '../contract.js';

const RETRYABLE_STATUSES = new Set([408, 409, 429]);

export function isRetryableStatus(status: number): boolean {
  return RETRYABLE_STATUSES.has(status) || status >= 500;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Why our own signal fired. A deadline (AbortSignal.timeout, or abort(reason) with a TimeoutError) is a
 * `timeout` another target may beat; anything else means the client went away. A reason that already is
 * an UpstreamError is passed through, so the caller can choose the kind.
 */
export function abortedError(signal: AbortSignal): UpstreamError {
  const reason: unknown = signal.reason;
  if (reason instanceof UpstreamError) return reason;
  if (reason instanceof Error && reason.name === 'TimeoutError') {
    return new UpstreamError('timeout', `upstream call timed out: ${reason.message}`);
  }
  return new UpstreamError('aborted', 'upstream call aborted');
}

/** fetch() rejected: refused, DNS, TLS, reset before the response; or our signal fired. */
export function fetchFailure(err: unknown, signal: AbortSignal): UpstreamError {
  if (signal.aborted) return abortedError(signal);
  return new UpstreamError('connect', `cannot reach upstream: ${describe(err)}`);
}

/** Reading the body failed after a 2xx: the connection dropped mid-answer. */
export function bodyReadFailure(err: unknown, signal: AbortSignal): UpstreamError {
  if (err instanceof UpstreamError) return err;
  if (signal.aborted) return abortedError(signal);
  return new UpstreamError('connect', `upstream connection lost mid-response: ${describe(err)}`);
}

/** A non-2xx status; the body is the (possibly truncated) error text the upstream sent. */
export function statusError(status: number, bodyText: string): UpstreamError {
  const message = envelopeMessage(parseJson(bodyText)) ?? (bodyText.trim().slice(0, 300) || `HTTP ${status}`);
  return new UpstreamError('http', `upstream answered ${status}: ${message}`, status, isRetryableStatus(status));
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

export function protocolError(message: string): UpstreamError {
  return new UpstreamError('protocol', message);
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

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** undici hides the useful part (ECONNREFUSED, ECONNRESET) in `cause`. */
function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause: unknown = err.cause;
  if (cause instanceof Error && cause.message && cause.message !== err.message) return `${err.message} (${cause.message})`;
  return err.message;
}
