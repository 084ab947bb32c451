/** Maps the failure of every upstream target to the client-facing error (see docs/errors.md). */
import { GatewayError, invalidRequest, upstreamFailure } from '../openai/errors.js';
import type { AllTargetsFailed } from '../routing/failover.js';

export function upstreamErrorToGateway(failure: AllTargetsFailed): GatewayError {
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
