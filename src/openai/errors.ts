/**
 * The gateway's error taxonomy and the OpenAI error envelope. Every error a client can see is one of
 * these; the full table is in docs/errors.md.
 */

/**
 * Only the types OpenAI's API and SDKs know: clients branch on them (the Vercel AI SDK reads a streamed
 * error's status from its type and code: `insufficient_quota` and `rate_limit` mean 429, `invalid` 400, the
 * rest 500). OpenAI answers quota exhaustion with `insufficient_quota` and its own failures with `server_error`;
 * the gateway uses the same for running out of credits (402) and for every 5xx, its own or an upstream's.
 */
export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'rate_limit_error'
  | 'insufficient_quota'
  | 'server_error';

export interface ErrorEnvelope {
  error: { message: string; type: ErrorType; param: string | null; code: string | null };
}

export class GatewayError extends Error {
  constructor(
    readonly status: number,
    readonly type: ErrorType,
    readonly code: string,
    message: string,
    readonly param: string | null = null,
    /** Extra response headers, e.g. Retry-After. */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'GatewayError';
  }

  toEnvelope(): ErrorEnvelope {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

export const invalidRequest = (message: string, param: string | null = null, code = 'invalid_value'): GatewayError =>
  new GatewayError(400, 'invalid_request_error', code, message, param);

export const unauthorized = (code: 'missing_api_key' | 'invalid_api_key' | 'revoked_api_key', message: string): GatewayError =>
  new GatewayError(401, 'authentication_error', code, message);

export const forbidden = (code: string, message: string, param: string | null = null): GatewayError =>
  new GatewayError(403, 'permission_error', code, message, param);

export const notFound = (code: string, message: string, param: string | null = null): GatewayError =>
  new GatewayError(404, 'not_found_error', code, message, param);

export const upstreamFailure = (status: 502 | 503 | 504, code: string, message: string, headers: Record<string, string> = {}): GatewayError =>
  new GatewayError(status, 'server_error', code, message, null, headers);

/**
 * The `x-should-retry` an error answer carries, which the openai SDKs obey over their own guess (they retry
 * 408, 409, 429 and 5xx). Retry when the answer says when (`retry-after`) or its status is transient; a 409
 * without a wait (an Idempotency-Key reused) or a 429 without one (a request over the tpm limit by itself)
 * would fail the same way again. An explicit header on the error wins.
 */
export function shouldRetry(e: GatewayError): boolean {
  const explicit = e.headers['x-should-retry'];
  if (explicit !== undefined) return explicit === 'true';
  const waits = e.headers['retry-after'] !== undefined || e.headers['retry-after-ms'] !== undefined;
  if (e.status === 409 || e.status === 429) return waits;
  return e.status === 408 || e.status >= 500 || waits;
}
