import type { Context, ErrorHandler, NotFoundHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { AppEnv } from '../../core/deps.js';
import type { Logger } from '../../core/logger.js';
import { anthropicEnvelope, isAnthropicDoor } from '../../anthropic/error-envelope.js';
import { GatewayError, shouldRetry } from '../../openai/errors.js';
import { StoreError } from '../../store/errors.js';

/** The request announced a body (a length or chunked framing). */
export function announcesBody(contentLength: string | undefined, transferEncoding: string | undefined): boolean {
  return transferEncoding !== undefined || (contentLength !== undefined && contentLength !== '0');
}

/** Where an error answer goes: the door decides its envelope, a body left unread its connection. */
export interface ErrorSite {
  path: string;
  hasBody: boolean;
  requestId: string | undefined;
}

/** An error's answer as plain values, for Hono (below) and the Node entry's direct path. */
export function errorAnswer(e: GatewayError, site: ErrorSite): { status: number; headers: Record<string, string>; body: string } {
  // The Anthropic door answers in Anthropic's envelope, also for what the middleware refused before it.
  const body = JSON.stringify(isAnthropicDoor(site.path) ? anthropicEnvelope(e) : e.toEnvelope());
  const headers: Record<string, string> = { 'content-type': 'application/json', ...e.headers };
  // On every error answer, so no openai SDK guesses (it would retry a 409 or 429 that cannot pass).
  headers['x-should-retry'] = String(shouldRetry(e));
  // Refused before its body was read (unauthenticated, too large, nowhere to go): close the connection
  // rather than read a body nobody will use to keep it alive.
  if ((e.status === 401 || e.status === 413 || e.code === 'unknown_endpoint') && site.hasBody) headers.connection = 'close';
  if (site.requestId) headers['x-request-id'] = site.requestId;
  return { status: e.status, headers, body };
}

export function errorResponse(c: Context<AppEnv>, e: GatewayError): Response {
  const answer = errorAnswer(e, {
    path: c.req.path,
    hasBody: announcesBody(c.req.header('content-length'), c.req.header('transfer-encoding')),
    requestId: c.get('requestId'),
  });
  return c.body(answer.body, answer.status as 400, answer.headers);
}

/**
 * What any failure is answered as: a GatewayError as it is, an unreachable store as a 503, anything
 * unexpected logged and answered 500 without details.
 */
export function asGatewayError(err: unknown, logger: Logger | undefined, requestId: string | undefined): GatewayError {
  if (err instanceof GatewayError) return err;
  if (err instanceof StoreError && err.code === 'unavailable') {
    // Contention the lock order should prevent (a deadlock) is worth an operator's look; an outage is not news.
    if (err.contention) logger?.error('store ended a transaction for contention', { requestId, error: err.message });
    else logger?.warn('store unavailable', { requestId, error: err.message });
    // The client's retry is the same either way; the words say which, for whoever reads the answer.
    const message = err.contention
      ? 'The credit ledger was too busy to finish this request (contention). Retry shortly.'
      : 'The credit ledger is unreachable right now. Retry shortly.';
    return new GatewayError(503, 'server_error', 'store_unavailable', message, null, { 'retry-after': '1' });
  }
  if (err instanceof HTTPException && err.status < 500) {
    return new GatewayError(err.status, 'invalid_request_error', 'invalid_request', err.message || 'Invalid request.');
  }
  logger?.error('unhandled error', { requestId, error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  return new GatewayError(500, 'server_error', 'internal_error', 'The gateway failed to process the request. It has been logged.');
}

/** Every error leaves in the door's envelope (OpenAI's, or Anthropic's on /v1/messages). */
export const onError: ErrorHandler<AppEnv> = (err, c) =>
  errorResponse(c, asGatewayError(err, c.get('deps')?.logger as Logger | undefined, c.get('requestId') as string | undefined));

export const onNotFound: NotFoundHandler<AppEnv> = (c) =>
  errorResponse(
    c,
    new GatewayError(404, 'not_found_error', 'unknown_endpoint', `Unknown endpoint: ${c.req.method} ${new URL(c.req.url).pathname}.`),
  );
