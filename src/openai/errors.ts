/**
 * The gateway's error taxonomy and the OpenAI error envelope. Every error a client can see is one of
 * these; the full table is in docs/errors.md.
 */

export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'insufficient_credits'
  | 'not_found_error'
  | 'rate_limit_error'
  | 'upstream_error'
  | 'api_error';

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

export const upstreamFailure = (status: 502 | 503 | 504, code: string, message: string): GatewayError =>
  new GatewayError(status, 'upstream_error', code, message);
