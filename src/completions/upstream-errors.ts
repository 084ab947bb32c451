/**
 * How a failed completion ended, and the error its client gets (see docs/errors.md). The failure
 * classification is failover's (src/routing/failover.ts); this only maps it.
 */
import type { Ending } from '../billing/charge.js';
import { GatewayError, invalidRequest, upstreamFailure } from '../openai/errors.js';
import { AllTargetsFailed } from '../routing/failover.js';

export interface AbortAware {
  abortedEnding(): Ending;
}

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
      return new GatewayError(503, 'api_error', 'gateway_shutting_down', 'The gateway is shutting down; retry the request.', null, {
        'retry-after': '1',
      });
    }
    if (ending === 'upstream_error') return upstreamFailure(504, 'upstream_timeout', 'The request exceeded its deadline before the answer was complete.');
    // The client is gone: nobody reads this.
    return upstreamFailure(504, 'request_aborted', 'The request ended before an answer was complete.');
  }
  return upstreamErrorToGateway(failure);
}

function upstreamErrorToGateway(failure: AllTargetsFailed): GatewayError {
  const e = failure.last;
  const tried = failure.attempts.map((a) => `${a.provider}/${a.model}: ${a.outcome}`).join(', ');
  if (e.kind === 'http' && (e.status === 400 || e.status === 413 || e.status === 422)) {
    return invalidRequest(`The upstream provider refused the request: ${e.message}`, null, 'upstream_rejected_request');
  }
  if (e.kind === 'unsupported') {
    return invalidRequest(`No upstream target of this model can serve the request: ${e.message}`, null, 'unsupported_parameter');
  }
  if (e.kind === 'timeout') return upstreamFailure(504, 'upstream_timeout', `Every upstream target timed out (${tried}).`);
  // 529: Anthropic's "overloaded".
  if (e.kind === 'connect' || (e.kind === 'http' && (e.status === 429 || e.status === 503 || e.status === 529))) {
    return upstreamFailure(503, 'upstream_unavailable', `No upstream target is available right now (${tried}). Retry shortly.`);
  }
  return upstreamFailure(502, 'upstream_error', `The upstream provider failed (${tried}).`);
}
