/**
 * The Node entry's direct path: a POST to a completion door (chat completions, completions, Messages,
 * Responses) is served from node:http's request and response, without the Hono app. The app's middlewares
 * (request id, observation, authentication, body limit, error envelopes, write deadline) run here as plain
 * calls of the same functions, and the pipeline (src/http/completion-door.ts) is the one every runtime
 * runs. What a request costs in the app and not here: a Web Request, a Hono Context and its Response, an
 * AbortController, a Web stream for a streamed answer, and a promise or two per middleware.
 *
 * Everything else goes to the app, and so do the requests whose handling the app owns: a browser's (an
 * `Origin`, for CORS) and a chunked body (counted while read). With tracing on, the request's span and the
 * authentication's are started here as the app's middlewares start them. docs/performance.md, "Twelfth
 * session".
 */
import { SpanStatusCode, context as otelContext, type TextMapGetter } from '@opentelemetry/api';
import type { IncomingHttpHeaders, IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { StopSignal } from '../../core/stop-signal.js';
import type { AppDeps } from '../../core/deps.js';
import { chatDoor } from '../../http/chat-completions.js';
import { serveCompletion, type CompletionDoor } from '../../http/completion-door.js';
import { legacyDoor } from '../../http/completions.js';
import type { DoorRequest } from '../../http/door-exchange.js';
import { messagesDoor } from '../../http/messages.js';
import { authenticate } from '../../http/middleware/auth.js';
import { announcesBody, asGatewayError, errorAnswer } from '../../http/middleware/errors.js';
import { observeEnd, startRequestSpan } from '../../http/middleware/observe.js';
import { requestIdOf } from '../../http/middleware/request-id.js';
import { responsesDoor } from '../../http/responses.js';
import { doorOf } from '../../observability/door.js';
import { RequestObservation } from '../../observability/request-observation.js';
import { noTelemetry } from '../../observability/telemetry.js';
import { GatewayError, invalidRequest } from '../../openai/errors.js';
import type { ApiKeyRecord } from '../../store/types.js';
import { relayStream } from './stream-relay.js';
import { guardAnswerWrite } from './write-deadline.js';

type DoorOf = (exchange: DoorRequest) => CompletionDoor;

const DOORS: ReadonlyMap<string, DoorOf> = new Map<string, DoorOf>([
  ['/v1/chat/completions', () => chatDoor],
  ['/v1/completions', () => legacyDoor],
  ['/v1/messages', () => messagesDoor],
  ['/v1/responses', responsesDoor],
]);

/** The door a request's target names, as the app routes it (a trailing slash allowed, the query ignored). */
function doorAt(url: string): { path: string; door: DoorOf } | null {
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  const door = DOORS.get(path.endsWith('/') ? path.slice(0, -1) : path);
  return door === undefined ? null : { path, door };
}

/**
 * The listener: completion doors served directly, the rest by `app` (the Hono app's listener). Only for a
 * listener that serves the public API; the operator's own listener is the app alone.
 */
export function directDoors(deps: AppDeps, app: RequestListener, writeTimeoutMs: number): RequestListener {
  return (incoming, outgoing) => {
    const at = incoming.method === 'POST' ? doorAt(incoming.url ?? '') : null;
    if (at === null || incoming.headers.origin !== undefined || incoming.headers['transfer-encoding'] !== undefined) {
      app(incoming, outgoing);
      return;
    }
    const observation = new RequestObservation(deps.telemetry ?? noTelemetry, deps.logger, doorOf(at.path), requestIdOf(headerOf(incoming, 'x-request-id')));
    const serve = (): Promise<void> => serveDirect(deps, incoming, outgoing, at.path, at.door, writeTimeoutMs, observation);
    (startRequestSpan(observation, incoming.headers, headerGetter, 'POST', at.path) ? otelContext.with(observation.context, serve) : serve()).catch((e: unknown) => {
      // Only a bug gets here (every failure of the request is answered inside): logged, the connection cut.
      deps.logger.error('unhandled error', { error: e instanceof Error ? (e.stack ?? e.message) : String(e) });
      outgoing.destroy();
    });
  };
}

/** A request header by its lowercase name, as a Web Request's Headers give it (a repeated one joined). */
function headerOf(incoming: IncomingMessage, name: string): string | undefined {
  const value = incoming.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

const headerGetter: TextMapGetter<IncomingHttpHeaders> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key],
};

async function serveDirect(
  deps: AppDeps,
  incoming: IncomingMessage,
  outgoing: ServerResponse,
  path: string,
  doorOfExchange: DoorOf,
  writeTimeoutMs: number,
  observation: RequestObservation,
): Promise<void> {
  const header = (name: string): string | undefined => headerOf(incoming, name);
  const { requestId } = observation;
  // The client's going away, as a completion listens for it.
  const closed = new StopSignal();
  outgoing.once('close', () => {
    if (!outgoing.writableFinished) closed.abort(incoming.errored ? incoming.errored.toString() : 'Client connection prematurely closed.');
  });
  let key: ApiKeyRecord | undefined;
  let status: number;
  let streaming = false;
  let bodyRead = false;
  try {
    const authenticating = observation.startSpan('svc.authenticate');
    try {
      key = await authenticate(deps, header('authorization'), header('x-api-key'));
    } catch (e) {
      authenticating?.setStatus({ code: SpanStatusCode.ERROR, message: e instanceof Error ? e.message : String(e) });
      throw e;
    } finally {
      authenticating?.end();
    }
    const length = header('content-length');
    // Without a length (and not chunked, which the app serves) there is no body; a length the parser took
    // is a number, and anything else is refused as too large rather than trusted.
    const size = length === undefined ? 0 : Number(length);
    if (!Number.isSafeInteger(size) || size > deps.limits.maxBodyBytes) {
      throw new GatewayError(413, 'invalid_request_error', 'request_too_large', `The request body exceeds ${deps.limits.maxBodyBytes} bytes.`);
    }
    let body: Promise<string> | null = null;
    const exchange: DoorRequest = {
      deps,
      key,
      requestId,
      observation,
      header,
      text: () => {
        bodyRead = true;
        return (body ??= readBody(incoming));
      },
      clientSignal: closed,
      abandonConnection: (error) => outgoing.destroy(error),
    };
    const answer = await serveCompletion(exchange, doorOfExchange(exchange));
    if (answer.kind === 'stream') {
      status = 200;
      streaming = true;
      relayStream(outgoing, status, answer.headers, answer.stream);
    } else {
      status = answer.status;
      writeAnswer(outgoing, status, answer.headers, answer.body, writeTimeoutMs);
    }
  } catch (err) {
    const e = asGatewayError(err, deps.logger, requestId);
    const hasBody = announcesBody(header('content-length'), header('transfer-encoding'));
    const answer = errorAnswer(e, { path, hasBody, requestId });
    // Refused before its body was read (the store unreachable while authenticating, say): the connection
    // closes rather than read a body nobody will use, as it does for a 401 or a 413.
    if (hasBody && !bodyRead) answer.headers.connection = 'close';
    status = answer.status;
    writeAnswer(outgoing, status, answer.headers, answer.body, writeTimeoutMs);
  }
  observeEnd(observation, { method: 'POST', status, streaming, key });
}

function writeAnswer(outgoing: ServerResponse, status: number, headers: Record<string, string>, body: string, writeTimeoutMs: number): void {
  // The client may have gone while the answer was prepared: nothing to write to.
  if (outgoing.destroyed) return;
  outgoing.writeHead(status, { ...headers, 'content-length': String(Buffer.byteLength(body)) });
  outgoing.end(body);
  guardAnswerWrite(outgoing, writeTimeoutMs);
}

/** The body's text, read once. UTF-8 as a Web Request's `text()` reads it: invalid bytes replaced, a BOM dropped. */
function readBody(incoming: IncomingMessage): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.once('end', () => {
      const text = (chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)).toString('utf8');
      resolve(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
    });
    // The client went away before its body was whole: nobody is left to read the answer.
    const cut = (): void => reject(invalidRequest('The request body ended before its declared length.', null, 'incomplete_body'));
    // Gone already (while the key was read): its 'close' was emitted before anyone listened.
    if (incoming.destroyed) {
      cut();
      return;
    }
    incoming.once('error', cut);
    incoming.once('close', () => {
      if (!incoming.complete) cut();
    });
  });
}
