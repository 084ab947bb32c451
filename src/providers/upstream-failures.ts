/**
 * Maps the ways any HTTP upstream call can fail (refused, reset, our own deadline or abort, a cut body, a
 * non-2xx status) onto UpstreamError, so failover decides on `kind`, `status` and `retryable` and never on
 * message text. Provider folders add only the parsing of their own error bodies.
 */
import { UpstreamError } from './contract.js';
import { bodyText, type UpstreamHeaders, type UpstreamReply } from './upstream-http.js';
import type { StopSignalLike } from '../core/stop-signal.js';

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
export function abortedError(signal: StopSignalLike): UpstreamError {
  const reason: unknown = signal.reason;
  if (reason instanceof UpstreamError) return reason;
  if (reason instanceof Error && reason.name === 'TimeoutError') {
    return new UpstreamError('timeout', `upstream call timed out: ${reason.message}`);
  }
  return new UpstreamError('aborted', 'upstream call aborted');
}

/** fetch() rejected: refused, DNS, TLS, reset before the response; or our signal fired. */
export function fetchFailure(err: unknown, signal: StopSignalLike): UpstreamError {
  if (signal.aborted) return abortedError(signal);
  return new UpstreamError('connect', `cannot reach upstream: ${describe(err)}`);
}

/** Reading the body failed after a 2xx: the connection dropped mid-answer. */
export function bodyReadFailure(err: unknown, signal: StopSignalLike): UpstreamError {
  if (err instanceof UpstreamError) return err;
  if (signal.aborted) return abortedError(signal);
  return new UpstreamError('connect', `upstream connection lost mid-response: ${describe(err)}`);
}

/**
 * What a provider's error body and headers said beyond the status, in OpenAI's terms: what the gateway's
 * client is told (src/completions/upstream-errors.ts) and whether failover goes on (src/routing/failover.ts).
 */
export interface UpstreamErrorDetail {
  /** OpenAI's `code` for the failure (`context_length_exceeded`, `unsupported_parameter` ...), or null. */
  code: string | null;
  param: string | null;
  /** How long the upstream asked to wait (retry-after-ms, retry-after, Gemini's RetryInfo), or null. */
  retryAfterMs: number | null;
  /**
   * A 400 about this target, not the request: a parameter or value this model or protocol does not take.
   * Another target may accept the same request, so failover goes on.
   */
  targetSpecific: boolean;
  /** The upstream account is out of money (OpenAI's 429 `insufficient_quota`): waiting a second will not help. */
  quotaExhausted: boolean;
}

const NO_DETAIL: UpstreamErrorDetail = { code: null, param: null, retryAfterMs: null, targetSpecific: false, quotaExhausted: false };

/** An upstream error answer (a non-2xx status, or an error inside a 2xx body) with what its body and headers said. */
export class UpstreamHttpError extends UpstreamError {
  constructor(
    message: string,
    status: number | null,
    retryable: boolean,
    readonly detail: UpstreamErrorDetail,
  ) {
    super('http', message, status, retryable);
  }
}

/** This target cannot take the request (a parameter it refuses), which says nothing of its health. */
export class UnsupportedRequestError extends UpstreamError {
  readonly detail: UpstreamErrorDetail;

  constructor(message: string, param: string | null) {
    super('unsupported', message, null, true);
    this.detail = { ...NO_DETAIL, code: 'unsupported_parameter', param, targetSpecific: true };
  }
}

export function detailOf(e: UpstreamError): UpstreamErrorDetail {
  return e instanceof UpstreamHttpError || e instanceof UnsupportedRequestError ? e.detail : NO_DETAIL;
}

/**
 * An upstream error: retryable on another target when its status says so (429, 5xx ...) or when the
 * request is only wrong for this target.
 */
export function upstreamHttpError(message: string, status: number | null, retryable: boolean, detail: Partial<UpstreamErrorDetail> = {}): UpstreamHttpError {
  const full = { ...NO_DETAIL, ...detail };
  return new UpstreamHttpError(message, status, retryable || full.targetSpecific, full);
}

/** A non-2xx status, with the message the provider's error body gave (or its raw text). */
export function httpStatusError(status: number, message: string, detail: Partial<UpstreamErrorDetail> = {}): UpstreamHttpError {
  return upstreamHttpError(`upstream answered ${status}: ${message}`, status, isRetryableStatus(status), detail);
}

/**
 * The wait an upstream asked for in its headers: `retry-after-ms` (OpenAI, milliseconds), then `retry-after`
 * (seconds, or an HTTP date). Null when neither is there or readable.
 */
export function retryAfterMsOf(headers: UpstreamHeaders | undefined): number | null {
  if (headers === undefined) return null;
  const ms = Number.parseFloat(headers.get('retry-after-ms') ?? '');
  if (Number.isFinite(ms) && ms >= 0) return Math.ceil(ms);
  const raw = headers.get('retry-after')?.trim();
  if (!raw) return null;
  if (/^\d+(\.\d+)?$/.test(raw)) return Math.ceil(Number(raw) * 1000);
  const at = Date.parse(raw);
  // An HTTP date is judged by the wall clock: the only clock the upstream and we share.
  return Number.isNaN(at) ? null : Math.max(0, at - Date.now());
}

/** The request (prompt plus output) is longer than the model's context window, in any provider's words. */
export const CONTEXT_TOO_LONG =
  /maximum context length|context[ _-]length|context window|prompt is too long|input token count.*exceeds|input length and `?max_tokens`? exceed/i;

/** A parameter or value this model or protocol does not take, in any provider's words (another may take it). */
export const UNSUPPORTED_BY_TARGET =
  /unsupported (parameter|value)|(is|are) not supported (with|by|for|on|in) (this|the) model|does not support|not supported by this model|is not enabled for models?\//i;

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

/** Reads at most `limit` characters of a body and releases the rest. */
export async function readTextLimited(response: UpstreamReply, limit: number = ERROR_BODY_LIMIT): Promise<string> {
  return bodyText(response.body, limit);
}

/** undici hides the useful part (ECONNREFUSED, ECONNRESET) in `cause`. */
function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause: unknown = err.cause;
  if (cause instanceof Error && cause.message && cause.message !== err.message) return `${err.message} (${cause.message})`;
  return err.message;
}
