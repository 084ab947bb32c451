/**
 * What an adapter needs of an HTTP call to its upstream, and nothing more: a POST out, and back a status,
 * the headers it reads, and the body as an async iterable of bytes.
 *
 * Not `fetch` and `Response`, because on Node those cost a request path its largest share of garbage: the
 * WHATWG Response, Headers, and a web ReadableStream over undici's body, with promise hops for every chunk
 * through each (docs/performance.md, issue 20). The Node runtime implements this directly on undici's
 * `dispatch` (../runtime/node/upstream-client.ts); edge runtimes get it over their platform's fetch
 * (`httpOverFetch`), so the adapters stay runtime-neutral.
 */
import { capBody } from './upstream-byte-cap.js';
import type { StopSignalLike } from '../core/stop-signal.js';

/** An answer's body. Leaving a `for await` over it early, or `cancel()`, releases the connection. */
export interface UpstreamBody extends AsyncIterable<Uint8Array> {
  cancel(reason?: unknown): Promise<void>;
  /**
   * The reader has the whole answer (its protocol said so, as `[DONE]` does) but the body's end may not have
   * arrived yet: let the connection go back to the pool by reading the little that is left, within a bound,
   * rather than closing it as stopping early does. Fire and forget. Absent: the iteration is ended as usual.
   */
  release?(): void;
}

/** The headers an adapter reads (content type, Retry-After), case-insensitive as in `Headers`. */
export interface UpstreamHeaders {
  get(name: string): string | null;
}

export interface UpstreamReply {
  readonly status: number;
  /** 2xx. The Node transport follows no redirect: a 3xx is a non-2xx like any other (docs/providers.md). */
  readonly ok: boolean;
  readonly headers: UpstreamHeaders;
  /** Null when the answer has no body (204, 304, HEAD). Read it, or text(), once. */
  readonly body: UpstreamBody | null;
  text(): Promise<string>;
}

export interface UpstreamPost {
  headers: Readonly<Record<string, string>>;
  /** JSON text: every adapter sends one. */
  body: string;
  /** Aborting it ends the call at any point: before the answer (the promise rejects) or while its body is read. */
  signal: StopSignalLike;
  /**
   * Bytes of the answer's body past which reading it fails with `responseTooLarge` (./upstream-byte-cap.ts)
   * and the call is ended. Every transport honours it: the Node one counts the bytes it receives anyway,
   * `httpOverFetch` wraps the body.
   */
  maxBytes?: number;
}

export type UpstreamHttp = (url: string, post: UpstreamPost) => Promise<UpstreamReply>;

/** Decodes a whole body; past `maxChars` (when given) the rest is released unread. */
export async function bodyText(body: UpstreamBody | null, maxChars = Infinity): Promise<string> {
  if (body === null) return '';
  const decoder = new TextDecoder();
  let text = '';
  for await (const chunk of body) {
    text += decoder.decode(chunk, { stream: true });
    // Breaking out of the loop ends the iteration, which releases the body.
    if (text.length >= maxChars) return text.slice(0, maxChars);
  }
  return text + decoder.decode();
}

/** A web ReadableStream as an UpstreamBody, by its reader (async iteration of web streams is not everywhere). */
export function webBody(stream: ReadableStream<Uint8Array>): UpstreamBody {
  let reader: ReadableStreamDefaultReader<Uint8Array> | null = null;
  return {
    cancel: (reason) => (reader === null ? stream.cancel(reason) : reader.cancel(reason)),
    async *[Symbol.asyncIterator]() {
      reader = stream.getReader();
      let done = false;
      try {
        for (;;) {
          const next = await reader.read();
          if (next.done) {
            done = true;
            return;
          }
          yield next.value;
        }
      } finally {
        if (!done) await reader.cancel().catch(() => {});
        reader.releaseLock();
      }
    },
  };
}

/** `signal` as the AbortSignal fetch takes: itself when it is one, else one that follows it. */
function abortSignalOf(signal: StopSignalLike): AbortSignal {
  if (signal instanceof AbortSignal) return signal;
  const follower = new AbortController();
  if (signal.aborted) follower.abort(signal.reason);
  else signal.addEventListener('abort', () => follower.abort(signal.reason), { once: true });
  return follower.signal;
}

/** The adapters' transport over a WHATWG fetch: the platform's on edge runtimes, or a test's. */
export function httpOverFetch(fetchImpl: typeof fetch): UpstreamHttp {
  return async (url, post) => {
    const response = await fetchImpl(url, { method: 'POST', headers: post.headers, body: post.body, signal: abortSignalOf(post.signal) });
    const whole = response.body === null ? null : webBody(response.body);
    const body = whole === null || post.maxBytes === undefined ? whole : capBody(whole, post.maxBytes);
    return {
      status: response.status,
      ok: response.ok,
      headers: response.headers,
      body,
      text: () => bodyText(body),
    };
  };
}
