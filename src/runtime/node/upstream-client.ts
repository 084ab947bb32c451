/**
 * The Node runtime's upstream transport (../../providers/upstream-http.ts), on undici's `request`.
 *
 * On edge runtimes the adapters get the platform's fetch. On Node, the global fetch (undici's fetch
 * underneath) costs 300 to 400 us of CPU per upstream call on these machines, most of it in the WHATWG fetch
 * algorithm (request and response objects, header guards, body mixins), against about 130 us for undici's
 * `request` (bench/upstream-client.mjs). The body is handed over as undici's own Node stream, not as a web
 * ReadableStream over it: the web stream added two objects and several promise hops for every chunk read,
 * about a quarter of the gateway's allocation per request (docs/performance.md, issue 20).
 *
 * What the adapters rely on is kept: the status, the headers, a streamed body whose early end closes the
 * upstream connection, and abort by signal at any point. Redirects are not followed: an LLM API answers a
 * POST directly, and a 3xx reaches the adapter as the non-2xx it is (docs/providers.md).
 */
import { Agent, request } from 'undici';
import type { UpstreamBody, UpstreamHeaders, UpstreamHttp } from '../../providers/upstream-http.js';

/** Statuses whose response has no body by definition. */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

type RawHeaders = Record<string, string | string[] | undefined>;

/** undici's header record (names lower-cased) read as `Headers.get` reads: repeated values joined by ", ". */
function headersOf(raw: RawHeaders): UpstreamHeaders {
  return {
    get(name) {
      const value = raw[name.toLowerCase()];
      if (value === undefined) return null;
      return Array.isArray(value) ? value.join(', ') : value;
    },
  };
}

export interface NodeUpstreamClientOptions {
  /** Idle upstream connections are kept this long for reuse. */
  keepAliveTimeoutMs?: number;
}

export interface NodeUpstreamClient {
  http: UpstreamHttp;
  /** Closes the pool's connections; calls in flight are aborted. */
  close(): Promise<void>;
}

/** The transport over one undici connection pool (unbounded per origin, as fetch's is). */
export function createNodeUpstreamClient(options: NodeUpstreamClientOptions = {}): NodeUpstreamClient {
  const dispatcher = new Agent({
    keepAliveTimeout: options.keepAliveTimeoutMs ?? 30_000,
    // Our own deadlines (connect, first token, between chunks, total) abort by signal; undici's 300 s
    // defaults stay only as a backstop.
  });

  const http: UpstreamHttp = async (url, post) => {
    const answer = await request(url, { method: 'POST', headers: post.headers, body: post.body, signal: post.signal, dispatcher });
    const status = answer.statusCode;
    const headers = headersOf(answer.headers);
    const ok = status >= 200 && status < 300;
    if (NULL_BODY_STATUSES.has(status)) {
      await answer.body.dump();
      return { status, ok, headers, body: null, text: () => Promise.resolve('') };
    }
    const source = answer.body;
    const body: UpstreamBody = {
      // A Node stream's iterator destroys the stream when the loop over it ends early, and destroying
      // undici's body closes the connection, as cancelling the web stream did.
      [Symbol.asyncIterator]: () => source[Symbol.asyncIterator]() as AsyncIterator<Uint8Array>,
      cancel: async (reason) => {
        source.destroy(reason instanceof Error ? reason : undefined);
      },
    };
    return { status, ok, headers, body, text: () => source.text() };
  };
  return { http, close: () => dispatcher.destroy() };
}
