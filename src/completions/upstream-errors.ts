/**
 * How a failed completion ended, and the error its client gets (see docs/errors.md, "Upstream failures").
 * Whether failover went on is failover's decision (src/routing/failover.ts); this only names the failure
 * that decided the answer and maps it.
 */
import type { Ending } from '../billing/charge.js';
import { GatewayError, invalidRequest, upstreamFailure } from '../openai/errors.js';
import type { UpstreamError } from '../providers/contract.js';
import { detailOf } from '../providers/upstream-failures.js';
import { AllTargetsFailed } from '../routing/failover.js';

export interface AbortAware {
  abortedEnding(): Ending;
}

/** The wait a 429 advises when no upstream said how long: about what one upstream rate-limit window needs. */
const DEFAULT_RETRY_AFTER_MS = 1000;

/** The ending of a completion whose upstream side threw `failure`. */
export function endingOfFailure(completion: AbortAware, failure: unknown): Ending {
  if (failure instanceof AllTargetsFailed && failure.last.kind === 'aborted') return completion.abortedEnding();
  return 'upstream_error';
}

/** The client-facing error for a completion that ended without an answer. */
export function completionError(completion: AbortAware, failure: unknown): unknown {
  if (!(failure instanceof AllTargetsFailed)) return failure;
  if (failure.last.kind === 'aborted') {
    const ending = completion.abortedEnding();
    if (ending === 'shutdown') {
      return new GatewayError(503, 'server_error', 'gateway_shutting_down', 'The gateway is shutting down; retry the request.', null, {
        'retry-after': '1',
      });
    }
    if (ending === 'upstream_error') return upstreamFailure(504, 'upstream_timeout', 'The request exceeded its deadline before the answer was complete.');
    // The client is gone: nobody reads this.
    return upstreamFailure(504, 'request_aborted', 'The request ended before an answer was complete.');
  }
  return upstreamErrorToGateway(failure);
}

/** This target could not take the request (its protocol or model lacks a feature); another might have. */
function cannotServe(e: UpstreamError): boolean {
  return e.kind === 'unsupported' || detailOf(e).targetSpecific;
}

function upstreamErrorToGateway(failure: AllTargetsFailed): GatewayError {
  const tried = failure.attempts.map((a) => `${a.provider}/${a.model}: ${a.outcome}`).join(', ');
  const last = failure.last;
  // Failover stopped on a refusal every target would share: relayed with the upstream's code and param.
  if (last.kind === 'http' && !last.retryable && (last.status === 400 || last.status === 413 || last.status === 422)) {
    const { code, param } = detailOf(last);
    return invalidRequest(`The upstream provider refused the request: ${last.message}`, param, code ?? 'upstream_rejected_request');
  }
  // The failure that decides the answer: the last one from a target that could have served the request.
  // When none could, the request asks for something no target of this model takes.
  const decisive = [...failure.failures].reverse().find((e) => !cannotServe(e));
  if (decisive === undefined) {
    const { code, param } = detailOf(last);
    const what = last.kind === 'unsupported' ? 'can serve the request' : 'accepts the request';
    return invalidRequest(`No upstream target of this model ${what}: ${last.message}`, param, code ?? 'unsupported_parameter');
  }
  const detail = detailOf(decisive);
  if (decisive.kind === 'timeout') return upstreamFailure(504, 'upstream_timeout', `Every upstream target timed out (${tried}).`);
  if (decisive.kind === 'http' && decisive.status === 429 && !detail.quotaExhausted) {
    const waitMs = retryHint(failure.failures, (e) => e.status === 429) ?? DEFAULT_RETRY_AFTER_MS;
    return new GatewayError(
      429,
      'rate_limit_error',
      'upstream_rate_limited',
      `The upstream provider is rate limiting this model (${tried}). Retry in ${Math.ceil(waitMs / 1000)} s.`,
      null,
      retryHeaders(waitMs),
    );
  }
  if (detail.quotaExhausted) {
    // The operator's upstream account ran out: no client retry helps until someone pays.
    return upstreamFailure(503, 'upstream_unavailable', `No upstream target is available right now (${tried}).`, { 'x-should-retry': 'false' });
  }
  // 529: Anthropic's "overloaded".
  if (decisive.kind === 'connect' || (decisive.kind === 'http' && (decisive.status === 503 || decisive.status === 529))) {
    const waitMs = retryHint(failure.failures, (e) => e.status === 503 || e.status === 529);
    const headers = waitMs === null ? {} : retryHeaders(waitMs);
    return upstreamFailure(503, 'upstream_unavailable', `No upstream target is available right now (${tried}). Retry shortly.`, headers);
  }
  return upstreamFailure(502, 'upstream_error', `The upstream provider failed (${tried}).`);
}

/** The shortest wait an upstream asked for among the failures `which` picks: the soonest a target frees up. */
function retryHint(failures: readonly UpstreamError[], which: (e: UpstreamError) => boolean): number | null {
  let best: number | null = null;
  for (const e of failures) {
    const ms = which(e) ? detailOf(e).retryAfterMs : null;
    if (ms !== null && (best === null || ms < best)) best = ms;
  }
  return best;
}

/** Retry-After in whole seconds (at least 1, as the header allows no fraction) and the exact `retry-after-ms`. */
function retryHeaders(waitMs: number): Record<string, string> {
  const ms = Math.max(0, Math.ceil(waitMs));
  return { 'retry-after': String(Math.max(1, Math.ceil(ms / 1000))), 'retry-after-ms': String(ms) };
}
