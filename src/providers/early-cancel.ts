/**
 * Wraps an upstream's event generator so that giving up on it before the first `next()` still cancels the
 * response body: a generator that never started ignores `return()`, which would leave the upstream
 * connection open (and, on HTTP/1.1, the socket out of the keep-alive pool) until the server ends it.
 */
import type { StreamEvent } from './contract.js';
import type { UpstreamBody } from './upstream-http.js';

export function cancelBodyOnEarlyReturn(
  body: UpstreamBody,
  events: AsyncGenerator<readonly StreamEvent[], void, undefined>,
): AsyncIterableIterator<readonly StreamEvent[]> {
  let started = false;
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    next() {
      started = true;
      return events.next();
    },
    async return() {
      if (!started) await body.cancel().catch(() => {});
      return events.return();
    },
  };
}
