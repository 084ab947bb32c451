/**
 * The Node runtime's upstream client: a `fetch` for the provider adapters built on undici's `request`.
 *
 * The adapters speak web standards (Request/Response, ReadableStream) so that they run on edge runtimes
 * unchanged, and there they get the platform's fetch. On Node, the global fetch (undici's fetch underneath)
 * costs 300 to 400 us of CPU per upstream call on these machines, most of it in the WHATWG fetch algorithm
 * (request and response objects, header guards, body mixins), against about 130 us for undici's lower-level
 * `request` with the body handed over as a web stream (bench/upstream-client.mjs). On a gateway that
 * spends about 1.7 ms per request, that is a tenth of its CPU.
 *
 * What the adapters rely on is kept: the status, the headers, a streamed body whose cancellation closes the
 * upstream connection, and abort by signal at any point. Unlike fetch, redirects are not followed: an LLM
 * API answers a POST directly, and a 3xx reaches the adapter as the non-2xx it is (docs/providers.md).
 */
import { Readable } from 'node:stream';
import { Agent, request } from 'undici';

/** Statuses whose response has no body by definition; `new Response(body, ...)` refuses one for them. */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

type HeaderValue = string | string[] | undefined;

function toHeaders(raw: Record<string, HeaderValue>): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else headers.append(name, value);
  }
  return headers;
}

function toRecord(init: HeadersInit | undefined): Record<string, string> {
  if (init === undefined) return {};
  if (init instanceof Headers) return Object.fromEntries(init.entries());
  if (Array.isArray(init)) return Object.fromEntries(init);
  return init;
}

function bodyOf(body: BodyInit | null | undefined): string | Uint8Array | undefined {
  if (body === null || body === undefined) return undefined;
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  // The adapters send JSON text; anything else is a programming error, not an upstream failure.
  throw new TypeError('the Node upstream client sends string or byte bodies only');
}

export interface NodeUpstreamFetchOptions {
  /** Idle upstream connections are kept this long for reuse. */
  keepAliveTimeoutMs?: number;
}

export interface NodeUpstreamClient {
  fetch: typeof fetch;
  /** Closes the pool's connections; calls in flight are aborted. */
  close(): Promise<void>;
}

/** A fetch-compatible function over one undici connection pool (unbounded per origin, as fetch's is). */
export function createNodeUpstreamClient(options: NodeUpstreamFetchOptions = {}): NodeUpstreamClient {
  const dispatcher = new Agent({
    keepAliveTimeout: options.keepAliveTimeoutMs ?? 30_000,
    // Our own deadlines (connect, first token, between chunks, total) abort by signal; undici's 300 s
    // defaults stay only as a backstop.
  });

  const upstreamFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    if (input instanceof Request) throw new TypeError('the Node upstream client takes a URL and init, not a Request');
    const method = (init?.method ?? 'GET').toUpperCase();
    const answer = await request(input, {
      method: method as 'POST',
      headers: toRecord(init?.headers),
      body: bodyOf(init?.body),
      signal: init?.signal ?? undefined,
      dispatcher,
    });
    const headers = toHeaders(answer.headers);
    const status = answer.statusCode;
    if (NULL_BODY_STATUSES.has(status) || method === 'HEAD') {
      await answer.body.dump();
      return new Response(null, { status, headers });
    }
    // Readable.toWeb: cancelling the web stream destroys the Node one, which closes the connection.
    const body = Readable.toWeb(answer.body) as ReadableStream<Uint8Array>;
    return new Response(body, { status, headers });
  };
  return { fetch: upstreamFetch as typeof fetch, close: () => dispatcher.destroy() };
}
