import type { Context, ErrorHandler, NotFoundHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { AppEnv } from '../../core/deps.js';
import { anthropicEnvelope, isAnthropicDoor } from '../../anthropic/error-envelope.js';
import { GatewayError, shouldRetry } from '../../openai/errors.js';
import { StoreError } from '../../store/errors.js';

/** The request announced a body (a length or chunked framing). */
function hasBody(c: Context<AppEnv>): boolean {
  const length = c.req.header('content-length');
  return c.req.header('transfer-encoding') !== undefined || (length !== undefined && length !== '0');
}

export function errorResponse(c: Context<AppEnv>, e: GatewayError): Response {
  // The Anthropic door answers in Anthropic's envelope, also for what the middleware refused before it.
  const res = c.json(isAnthropicDoor(c.req.path) ? anthropicEnvelope(e) : e.toEnvelope(), e.status as 400);
  for (const [k, v] of Object.entries(e.headers)) res.headers.set(k, v);
  // On every error answer, so no openai SDK guesses (it would retry a 409 or 429 that cannot pass).
  res.headers.set('x-should-retry', String(shouldRetry(e)));
  // Refused before its body was read (unauthenticated, too large, nowhere to go): close the connection
  // rather than read a body nobody will use to keep it alive.
  if ((e.status === 401 || e.status === 413 || e.code === 'unknown_endpoint') && hasBody(c)) res.headers.set('connection', 'close');
  const id = c.get('requestId');
  if (id) res.headers.set('x-request-id', id);
  return res;
}

/** Every error leaves in the door's envelope (OpenAI's, or Anthropic's on /v1/messages); anything unexpected is logged and answered 500 without details. */
export const onError: ErrorHandler<AppEnv> = (err, c) => {
  if (err instanceof GatewayError) return errorResponse(c, err);
  if (err instanceof StoreError && err.code === 'unavailable') {
    c.get('deps')?.logger.warn('store unavailable', { requestId: c.get('requestId'), error: err.message });
    return errorResponse(
      c,
      new GatewayError(503, 'server_error', 'store_unavailable', 'The credit ledger is unreachable right now. Retry shortly.', null, {
        'retry-after': '1',
      }),
    );
  }
  if (err instanceof HTTPException && err.status < 500) {
    return errorResponse(c, new GatewayError(err.status, 'invalid_request_error', 'invalid_request', err.message || 'Invalid request.'));
  }
  c.get('deps')?.logger.error('unhandled error', {
    requestId: c.get('requestId'),
    error: err instanceof Error ? (err.stack ?? err.message) : String(err),
  });
  return errorResponse(c, new GatewayError(500, 'server_error', 'internal_error', 'The gateway failed to process the request. It has been logged.'));
};

export const onNotFound: NotFoundHandler<AppEnv> = (c) =>
  errorResponse(
    c,
    new GatewayError(404, 'not_found_error', 'unknown_endpoint', `Unknown endpoint: ${c.req.method} ${new URL(c.req.url).pathname}.`),
  );
