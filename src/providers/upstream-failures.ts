/**
 * Maps the ways any HTTP upstream call can fail (refused, reset, our own deadline or abort, a cut body, a
 * non-2xx status) onto UpstreamError, so failover decides on `kind`, `status` and `retryable` and never on
 * message text. Provider folders add only the parsing of their own error bodies.
 */
import { UpstreamError } from './contract.js';

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

/** A non-2xx status, with the message the provider's error body gave (or its raw text). */
export function httpStatusError(status: number, message: string): UpstreamError {
  return new UpstreamError('http', `upstream answered ${status}: ${message}`, status, isRetryableStatus(status));
}

export function protocolError(message: string): UpstreamError {
  return new UpstreamError('protocol', message);
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** Error bodies are read only this far: enough for any error envelope, bounded against a hostile upstream. */
export const ERROR_BODY_LIMIT = 64 * 1024;

/** Reads at most `limit` characters of a body and cancels the rest. */
export async function readTextLimited(response: Response, limit: number = ERROR_BODY_LIMIT): Promise<string> {
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  try {
    while (text.length < limit) {
      const { done, value } = await reader.read();
      if (done) return text + decoder.decode();
      text += decoder.decode(value, { stream: true });
    }
    return text.slice(0, limit);
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/** undici hides the useful part (ECONNREFUSED, ECONNRESET) in `cause`. */
function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause: unknown = err.cause;
  if (cause instanceof Error && cause.message && cause.message !== err.message) return `${err.message} (${cause.message})`;
  return err.message;
}
