/**
 * The cap on the bytes read from any upstream answer: a one-piece JSON answer, a stream, an error body.
 * Applied once, to the `fetch` every adapter calls (./registry.ts), so no adapter can forget it and each keeps
 * reading its Response as usual: past the cap the body errors with an UpstreamError, which the adapters'
 * read paths pass through unchanged (`bodyReadFailure`), the source body is cancelled (closing the upstream
 * connection) and failover treats the attempt like any malformed answer. Memory stays below the cap per call.
 */
import { UpstreamError } from './contract.js';

export function responseTooLarge(maxBytes: number): UpstreamError {
  return new UpstreamError(
    'protocol',
    `upstream answer exceeded ${maxBytes} bytes (server.max_upstream_response_bytes): the attempt was ended`,
  );
}

/**
 * A body that yields what `source` yields until `maxBytes` have passed, then errors with responseTooLarge
 * and cancels `source`. Cancelling it cancels `source`. Pull-driven with no queue of its own, so nothing is
 * read ahead of the consumer.
 */
export function capBody(source: ReadableStream<Uint8Array>, maxBytes: number): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  let seen = 0;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) {
          controller.close();
          return;
        }
        seen += value.byteLength;
        if (seen > maxBytes) {
          controller.error(responseTooLarge(maxBytes));
          await reader.cancel().catch(() => {});
          return;
        }
        controller.enqueue(value);
      },
      cancel(reason) {
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}

/** `fetchImpl`, with every response body capped at `maxBytes`. */
export function capResponseBytes(fetchImpl: typeof fetch, maxBytes: number): typeof fetch {
  const capped = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const response = await fetchImpl(input, init);
    if (response.body === null) return response;
    return new Response(capBody(response.body, maxBytes), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
  return capped as typeof fetch;
}
