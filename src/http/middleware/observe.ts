/**
 * Observes every request: its metrics, its span (when tracing is on, continuing a client's `traceparent`)
 * and one access line when it ends. A completion's request ends when its hold ends, which for a stream is
 * after the response began. The access line carries ids (request, key, account) and counts, never a
 * secret, a header or a prompt.
 */
import { SpanKind, SpanStatusCode, context as otelContext, trace, type TextMapGetter } from '@opentelemetry/api';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../../core/deps.js';
import {
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_URL_PATH,
  GEN_AI_OPERATION_NAME,
  GEN_AI_REQUEST_MODEL,
  GEN_AI_USAGE_INPUT_TOKENS,
  GEN_AI_USAGE_OUTPUT_TOKENS,
  SVC_ATTEMPTS,
  SVC_CREDITS,
  SVC_ENDING,
  SVC_KEY_ID,
  SVC_REQUEST_ID,
  SVC_ROUTED_MODEL,
} from '../../observability/attributes.js';
import { doorOf } from '../../observability/door.js';
import { RequestObservation } from '../../observability/request-observation.js';
import { noTelemetry } from '../../observability/telemetry.js';
import type { ApiKeyRecord } from '../../store/types.js';

const headerGetter: TextMapGetter<Headers> = {
  keys: (carrier) => [...carrier.keys()],
  get: (carrier, key) => carrier.get(key) ?? undefined,
};

export const observe: MiddlewareHandler<AppEnv> = async (c, next) => {
  const deps = c.get('deps');
  const telemetry = deps.telemetry ?? noTelemetry;
  const path = c.req.path;
  const door = doorOf(path);
  const obs = new RequestObservation(telemetry, deps.logger, door, c.get('requestId'));
  c.set('observation', obs);
  if (startRequestSpan(obs, c.req.raw.headers, headerGetter, c.req.method, path)) {
    await otelContext.with(obs.context, next);
  } else {
    await next();
  }
  observeEnd(obs, {
    method: c.req.method,
    status: c.res.status,
    streaming: c.res.headers.get('content-type')?.startsWith('text/event-stream') === true,
    key: c.get('key') as ApiKeyRecord | undefined,
  });
};

/**
 * The request's SERVER span when tracing is on, continuing a client's `traceparent` from `carrier`; set on
 * `obs` (its span and context). False when tracing is off. Shared with the Node entry's direct path.
 */
export function startRequestSpan<C>(obs: RequestObservation, carrier: C, getter: TextMapGetter<C>, method: string, path: string): boolean {
  const tracing = obs.telemetry.tracing;
  if (tracing === null) return false;
  const parent = tracing.propagator.extract(otelContext.active(), carrier, getter);
  obs.span = tracing.tracer.startSpan(
    `${method} ${path.startsWith('/v1/') || path.startsWith('/admin/v1/') ? path : obs.door}`,
    { kind: SpanKind.SERVER, attributes: { [ATTR_HTTP_REQUEST_METHOD]: method, [ATTR_URL_PATH]: path, [SVC_REQUEST_ID]: obs.requestId } },
    parent,
  );
  obs.context = trace.setSpan(parent, obs.span);
  return true;
}

/** How a request was answered, for its metrics, span and access line. */
export interface AnsweredRequest {
  method: string;
  status: number;
  /** The answer is an SSE stream, open until the completion's hold ended. */
  streaming: boolean;
  /** The authenticated key, when there was one. */
  key: ApiKeyRecord | undefined;
}

/**
 * Ends a request's observation once it is answered: at once, or for a completion when its hold ended. Shared
 * by this middleware and the Node entry's direct path (src/runtime/node/direct-doors.ts).
 */
export function observeEnd(obs: RequestObservation, answered: AnsweredRequest): void {
  if (obs.ended === null) {
    finish(obs, answered);
    return;
  }
  // A stream is open until its completion's hold ended; a non-streaming completion has ended already.
  if (answered.streaming) obs.telemetry.streamOpened();
  void obs.ended.then(() => {
    if (answered.streaming) obs.telemetry.streamClosed();
    finish(obs, answered);
  });
}

function finish(obs: RequestObservation, { method, status, key }: AnsweredRequest): void {
  const { telemetry, door } = obs;
  const seconds = (performance.now() - obs.startedAt) / 1000;
  const done = obs.completion;
  telemetry.requestEnded({
    door,
    alias: obs.alias,
    provider: done?.provider ?? '',
    model: done?.model ?? '',
    status,
    seconds,
    upstreamSeconds: obs.upstreamMs / 1000,
  });
  if (status === 429) telemetry.rateLimited(door);
  if (obs.span !== null) {
    const span = obs.span;
    span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
    if (key) span.setAttribute(SVC_KEY_ID, key.id);
    if (obs.alias !== '') {
      span.setAttributes({ [GEN_AI_OPERATION_NAME]: 'chat', [GEN_AI_REQUEST_MODEL]: obs.alias });
    }
    if (done !== null) {
      span.setAttributes({
        [SVC_ROUTED_MODEL]: `${done.provider}/${done.model}`,
        [GEN_AI_USAGE_INPUT_TOKENS]: done.promptTokens,
        [GEN_AI_USAGE_OUTPUT_TOKENS]: done.completionTokens,
        [SVC_CREDITS]: done.credits,
        [SVC_ATTEMPTS]: done.attempts,
        [SVC_ENDING]: done.ending,
      });
    }
    if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  }
  // Built field by field: object spreads of the optional parts cost microseconds each on this path
  // (docs/performance.md, "Thirteenth session").
  const line: Record<string, unknown> = {
    requestId: obs.requestId,
    method,
    door,
    status,
    latencyMs: Math.round(seconds * 1000),
  };
  if (key) {
    line.keyId = key.id;
    line.accountId = key.accountId;
  }
  if (done !== null) {
    line.alias = done.alias;
    line.routedModel = `${done.provider}/${done.model}`;
    line.promptTokens = done.promptTokens;
    line.completionTokens = done.completionTokens;
    line.credits = done.credits;
    line.attempts = done.attempts;
    line.ending = done.ending;
    line.upstreamMs = Math.round(obs.upstreamMs);
    if (done.settlementPending) {
      line.settlement = 'pending';
      line.holdId = done.holdId;
    }
  }
  // Probes and scrapes come every few seconds: their lines are debug, the rest is the access log.
  if (door === 'probe' || door === 'metrics') obs.logger.debug('request', line);
  else obs.logger.info('request', line);
}

/** Runs `middleware` in a child span of the request's, ended when it hands on (or answers). */
export function inSpan(name: string, middleware: MiddlewareHandler<AppEnv>): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const span = c.get('observation')?.startSpan(name) ?? null;
    if (span === null) return middleware(c, next);
    let open = true;
    const end = (): void => {
      if (open) span.end();
      open = false;
    };
    try {
      return await middleware(c, async () => {
        end();
        await next();
      });
    } catch (e) {
      if (open) span.setStatus({ code: SpanStatusCode.ERROR, message: e instanceof Error ? e.message : String(e) });
      throw e;
    } finally {
      end();
    }
  };
}
