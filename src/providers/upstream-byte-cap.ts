/**
 * The cap on the bytes read from any upstream answer: a one-piece JSON answer, a stream, an error body.
 * Applied once, to the transport every adapter calls (./registry.ts), so no adapter can forget it, and
 * enforced by the transport itself (`UpstreamPost.maxBytes`); each adapter keeps reading its reply as usual: past the cap the body errors with an UpstreamError, which the adapters'
 * read paths pass through unchanged (`bodyReadFailure`), the source body is released (closing the upstream
 * connection) and failover treats the attempt like any malformed answer. Memory stays below the cap per call.
 */
import { UpstreamError } from './contract.js';
import type { UpstreamBody, UpstreamHttp } from './upstream-http.js';

export function responseTooLarge(maxBytes: number): UpstreamError {
  return new UpstreamError(
    'protocol',
    `upstream answer exceeded ${maxBytes} bytes (server.max_upstream_response_bytes): the attempt was ended`,
  );
}

/**
 * A body that yields what `source` yields until `maxBytes` have passed, then throws responseTooLarge and
 * releases `source`. Cancelling it cancels `source`. Nothing is read ahead of the consumer. An iterator
 * object rather than an async generator: one promise per network read, not a generator's queue and two.
 */
export function capBody(source: UpstreamBody, maxBytes: number): UpstreamBody {
  return {
    cancel: (reason) => source.cancel(reason),
    ...(source.release ? { release: () => source.release?.() } : {}),
    [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
      const inner = source[Symbol.asyncIterator]();
      let seen = 0;
      const tooLarge = async (): Promise<never> => {
        await inner.return?.().catch(() => {});
        throw responseTooLarge(maxBytes);
      };
      return {
        next: () =>
          inner.next().then((result) => {
            if (result.done === true) return result;
            seen += result.value.byteLength;
            return seen > maxBytes ? tooLarge() : result;
          }),
        return: async () => {
          await inner.return?.();
          return { done: true, value: undefined };
        },
      };
    },
  };
}

/**
 * `http`, with every reply's body capped at `maxBytes` (the smaller of two caps wins). The transport
 * enforces it (`UpstreamPost.maxBytes`): the Node one counts the bytes it receives anyway, so a wrapper
 * around each reply's body here cost every read of every request a promise and a closure more.
 */
export function capReplyBytes(http: UpstreamHttp, maxBytes: number): UpstreamHttp {
  return (url, post) =>
    // Field by field, not a spread of `post`: this runs on every upstream call.
    http(url, {
      headers: post.headers,
      body: post.body,
      signal: post.signal,
      maxBytes: post.maxBytes === undefined ? maxBytes : Math.min(post.maxBytes, maxBytes),
    });
}
