/**
 * The completion pipeline behind every completion door (chat, legacy completions, Anthropic Messages,
 * Responses): a request is read, authenticated (before this), quoted, rate-limited, held, routed with
 * failover, settled once, and answered in the door's shape.
 */
import { quoteRequest } from '../billing/quote.js';
import { Completion, type CompletionDeps } from '../completions/completion.js';
import { completeNonStreaming, type NonStreamingAnswer } from '../completions/non-streaming.js';
import { startStreaming } from '../completions/streaming.js';
import { SSE_HEADERS } from '../streaming/sse-encode.js';
import type { AppDeps } from '../core/deps.js';
import { newId, newTimeOrderedId } from '../core/ids.js';
import type { ChatCompletion, ChatRequest } from '../openai/chat-types.js';
import type { StreamEncoder } from '../completions/stream-encoder.js';
import { invalidRequest, notFound } from '../openai/errors.js';
import { DROPPED_PARAMS_HEADER, paramsFor, type BoundedRequest, type ParamTarget } from '../providers/target-params.js';
import { ALIASES, isAlias } from '../routing/catalog.js';
import { admitRate } from '../ratelimit/admit.js';
import { resolveRoute } from '../routing/router.js';
import type { StoredResponse } from '../store/types.js';
import {
  IDEMPOTENCY_HEADER,
  IdempotentRequest,
  idempotentHoldId,
  parseIdempotencyKey,
  requestFingerprint,
} from './idempotency.js';
import type { DoorAnswer, DoorRequest } from './door-exchange.js';
import { parseJsonObject } from './json-body.js';
import { parseQualityBiasHeader, QUALITY_BIAS_HEADER } from './quality-bias-header.js';

function completionDeps(deps: AppDeps): CompletionDeps {
  return { ledger: deps.store.ledger, clock: deps.clock, logger: deps.logger, limits: deps.limits, registry: deps.completions };
}

/**
 * `x-svc-dropped-params`: what the target that answered did not receive of what the client set. A stream's
 * headers name its first accepting target's (a later continuation on another target is in `svc.attempts`).
 */
function droppedHeader(completion: Completion, request: BoundedRequest): Record<string, string> {
  const target = completion.failover.target;
  if (target === null) return {};
  const { dropped } = paramsFor(target.params, request);
  return dropped.length === 0 ? {} : { [DROPPED_PARAMS_HEADER]: dropped.join(', ') };
}

function refuseDroppedParams(targets: readonly ParamTarget[], request: BoundedRequest): void {
  const drops = targets.map((t) => paramsFor(t, request));
  if (drops.some((d) => d.dropped.length === 0 && d.refused === null)) return;
  const first = drops.find((d) => d.dropped.length > 0);
  if (first === undefined) return; // refused for another reason: failover says which
  const param = first.dropped[0] as string;
  throw invalidRequest(
    `Unsupported parameter '${param}': no model serving '${request.model}' takes it (strict_params is on; without it the parameter is dropped and named in ${DROPPED_PARAMS_HEADER}).`,
    param,
    'unsupported_parameter',
  );
}

function replayed(requestId: string, stored: StoredResponse): DoorAnswer {
  return {
    kind: 'body',
    status: stored.status,
    headers: { 'content-type': stored.contentType, 'idempotent-replayed': 'true', 'x-request-id': requestId },
    body: stored.body,
  };
}

/**
 * A front door of the completion pipeline: how its body becomes the one internal request, and how the
 * answer is framed back. Everything between (authentication, quote, rate limit, idempotency, hold, routing,
 * failover, settlement) is shared: a door is a translation at the edge, not a second pipeline.
 */
export interface CompletionDoor {
  parse(body: Record<string, unknown>): ChatRequest | Promise<ChatRequest>;
  /** Which door an Idempotency-Key's request came through (absent: chat completions). */
  scope?: string;
  /** Prefix of the answer's id (`chatcmpl-`, `cmpl-`, `msg_`). */
  idPrefix: string;
  /** The stream's framing; undefined: chat completions'. */
  encoder?: (completion: Completion) => StreamEncoder;
  /** The non-streaming body; `stopSequence`: the one that ended the answer, where the upstream said. */
  render(answer: ChatCompletion, stopSequence: string | null): object;
  /** Awaited with the rendered body before it is sent (the Responses door keeps the answer for later turns). */
  keep?(rendered: object): Promise<void>;
}

export async function serveCompletion(exchange: DoorRequest, door: CompletionDoor): Promise<DoorAnswer> {
  const { deps, key, requestId, observation } = exchange;
  const request = await door.parse(parseJsonObject(await exchange.text()));
  if (!isAlias(request.model)) {
    throw notFound(
      'model_not_found',
      `The model '${request.model}' does not exist. Available models: ${ALIASES.join(', ')}.`,
      'model',
    );
  }
  const qualityBias = parseQualityBiasHeader(exchange.header(QUALITY_BIAS_HEADER));
  const idempotencyKey = parseIdempotencyKey(exchange.header(IDEMPOTENCY_HEADER));
  const route = resolveRoute(deps.routing, request.model, key.environment, request, qualityBias);
  // Known from here: a refusal below (429, strict_params) is counted under the alias asked for.
  if (observation !== undefined) observation.alias = route.entry.id;
  const quote = await quoteRequest(route, request, { mediaUrlMaxTokens: deps.limits.mediaUrlMaxTokens });
  const bounded = { ...request, max_tokens: quote.maxOutputTokens };
  // With strict_params, a request no target can take whole is refused before anything is held.
  if (deps.limits.strictParams === true) refuseDroppedParams(route.targets.map((t) => t.params), bounded);
  // Before the credit hold: a request over the key's rate limit is refused (429) holding nothing.
  const rateHeaders = await admitRate(deps.rateLimiting, key, quote, {
    findKey: (id) => deps.store.keys.findKey(id),
    retryDelaysMs: deps.limits.ledgerRetryDelaysMs,
  });

  let idempotent: IdempotentRequest | null = null;
  let holdId = newTimeOrderedId('hold_');
  if (idempotencyKey !== null) {
    const fingerprint = await requestFingerprint(await exchange.text(), qualityBias, door.scope ?? '');
    const claim = await IdempotentRequest.claim(deps.store.idempotency, { keyId: key.id, key: idempotencyKey, fingerprint });
    if ('replay' in claim) return replayed(requestId, claim.replay);
    idempotent = claim.claimed;
    holdId = await idempotentHoldId(key.id, idempotencyKey);
  }
  // Idempotency writes outlive the completion by a moment; shutdown waits for them (the registry tracks them).
  const release = (): void => {
    if (idempotent === null) return;
    deps.completions.track(
      idempotent.release().catch((e: unknown) => deps.logger.warn('idempotency key release failed', { requestId, error: String(e) })),
    );
  };
  const record = (response: StoredResponse): Promise<void> => {
    if (idempotent === null) return Promise.resolve();
    const write = idempotent.record(response).catch((e: unknown) => deps.logger.warn('idempotency record failed', { requestId, error: String(e) }));
    deps.completions.track(write);
    return write;
  };

  let completion: Completion;
  try {
    completion = await Completion.open(completionDeps(deps), {
      key,
      request,
      requestId,
      completionId: newId(door.idPrefix),
      holdId,
      holdIdFromRequest: idempotent !== null,
      route,
      quote,
      clientSignal: exchange.clientSignal,
      afterPartial: request.stream ? 'continue' : 'restart',
      observation,
    });
  } catch (e) {
    release();
    throw e;
  }

  if (request.stream) {
    let recording = '';
    const abandonConnection = exchange.abandonConnection;
    const stream = await startStreaming(
      completion,
      idempotent === null
        ? { abandonConnection, ...(door.encoder ? { encoder: door.encoder(completion) } : {}) }
        : {
            abandonConnection,
            ...(door.encoder ? { encoder: door.encoder(completion) } : {}),
            tap: (frames) => {
              recording += frames;
            },
            beforeDone: (ending) =>
              ending === 'completed'
                ? record({ status: 200, contentType: SSE_HEADERS['content-type'] ?? 'text/event-stream', body: recording })
                : Promise.resolve(),
            onClosed: (ending) => {
              if (ending !== 'completed') release();
            },
          },
    ).catch((e: unknown) => {
      release();
      throw e;
    });
    return { kind: 'stream', headers: { ...SSE_HEADERS, ...rateHeaders, ...droppedHeader(completion, bounded), 'x-request-id': requestId }, stream };
  }
  let answer: NonStreamingAnswer;
  try {
    answer = await completeNonStreaming(completion);
  } catch (e) {
    release();
    throw e;
  }
  const rendered = door.render(answer.answer, answer.stopSequence);
  if (door.keep) await door.keep(rendered);
  const json = JSON.stringify(rendered);
  // The answer is paid for: a failure to keep it for replay must not take it from the client.
  if (idempotent !== null) await record({ status: 200, contentType: 'application/json', body: json });
  return {
    kind: 'body',
    status: 200,
    headers: { ...rateHeaders, ...droppedHeader(completion, bounded), 'content-type': 'application/json', 'x-request-id': requestId },
    body: json,
  };
}
