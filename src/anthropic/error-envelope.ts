/**
 * Errors on the Anthropic door, in Anthropic's envelope (`{"type":"error","error":{"type","message"}}`),
 * so the Anthropic SDKs raise their usual exception types. The status is the gateway's (docs/errors.md);
 * the type is Anthropic's name for it.
 */
import type { GatewayError } from '../openai/errors.js';

export interface AnthropicErrorEnvelope {
  type: 'error';
  error: { type: string; message: string };
}

const TYPE_BY_STATUS: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  409: 'invalid_request_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  503: 'overloaded_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

/** The door's paths: their errors, and those of the middleware before them, use this envelope. */
export function isAnthropicDoor(path: string): boolean {
  return path === '/v1/messages' || path.startsWith('/v1/messages/');
}

export function anthropicEnvelope(e: GatewayError): AnthropicErrorEnvelope {
  return { type: 'error', error: { type: TYPE_BY_STATUS[e.status] ?? 'api_error', message: e.message } };
}
