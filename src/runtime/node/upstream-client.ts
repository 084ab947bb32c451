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
import { Agent, type Dispatcher } from 'undici';
import type { UpstreamBody, UpstreamHeaders, UpstreamHttp } from '../../providers/upstream-http.js';

/** undici's body: a Node Readable, with dump() to read a tail without keeping it. */
type BodyReadable = Dispatcher.ResponseData['body'];

/** Statuses whose response has no body by definition. */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

type RawHeaders = Record<string, string | string[] | undefined>;

const ignore = (): void => {};

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

/** Bytes buffered ahead of the reader before the socket is paused (undici buffers up to 64 KiB more). */
const READ_AHEAD_BYTES = 64 * 1024;

/**
 * What a released body may still read, and for how long, to reach its end and give its connection back to
 * the pool: after `[DONE]` a server sends only the chunked encoding's last 5 bytes, sometimes in a later
 * packet. Past either bound the connection is closed, as it was before release existed.
 */
const RELEASE_TAIL_BYTES = 64 * 1024;
const RELEASE_TAIL_MS = 1_000;

/** The queued chunks as one, copied only when there are several. */
function joined(chunks: Uint8Array[], bytes: number): Uint8Array {
  if (chunks.length === 1) return chunks[0] as Uint8Array;
  return Buffer.concat(chunks, bytes);
}

/**
 * undici's body stream read as the chunks that arrived since the last read, joined. undici emits one 'data'
 * per HTTP chunk, and an SSE upstream writes one chunk per event, so a network read of 20 events is 20
 * 'data' events in one synchronous turn. Handing each to the reader on its own sent every event through every
 * layer above (SSE decoding, the adapter, the output bound, observation, failover) one asynchronous step at a
 * time, about 14 promises a step (docs/performance.md, "Eighth session"). A waiting read is therefore
 * answered one microtask later, with everything that turn delivered.
 *
 * Not the stream's own async iterator: that one destroys the stream whenever the loop over it stops before
 * the stream emitted 'end', and an adapter stops at the `[DONE]` event, usually a tick before 'end', so every
 * request paid for an AbortError with its stack trace (about 60 us under the profiler). Here stopping early
 * destroys the stream only when its end has not arrived yet: then the upstream is still sending, and
 * destroying it closes that connection.
 */
class NodeBodyIterator implements AsyncIterator<Uint8Array> {
  private queue: Uint8Array[] = [];
  private queuedBytes = 0;
  /** Every byte delivered so far: undici's dump() bounds the body's whole length, not what is left. */
  private receivedBytes = 0;
  private released = false;
  private ended = false;
  private failure: Error | null = null;
  private waiter: { resolve: (result: IteratorResult<Uint8Array>) => void; reject: (error: Error) => void } | null = null;
  private answering = false;

  constructor(private readonly source: BodyReadable) {
    // The stream may have ended or died before the first read (a reset, a cancel): its events are gone, so
    // its state says what a read must answer, or the read would wait for ever.
    if (source.errored !== null) this.failure = source.errored;
    else if (source.readableEnded) this.ended = true;
    else if (source.destroyed) this.failure = new Error('the upstream body closed before its end');
    source.on('data', (chunk: Uint8Array) => {
      this.receivedBytes += chunk.byteLength;
      if (this.released) return;
      this.queue.push(chunk);
      this.queuedBytes += chunk.byteLength;
      // Paused even with a read waiting, so one answer is never larger than the read-ahead (take() resumes).
      if (this.queuedBytes >= READ_AHEAD_BYTES) source.pause();
      if (this.waiter !== null) this.answerSoon();
    });
    source.on('end', () => {
      this.ended = true;
      this.answerSoon();
    });
    source.on('error', (error: Error) => {
      this.failure = error;
      this.answerSoon();
    });
    // Destroyed without an error (undici gives one when the body had not ended, so this is a backstop):
    // a read waiting for more must not wait for ever.
    source.on('close', () => {
      if (!this.ended && this.failure === null) this.failure = new Error('the upstream body closed before its end');
      this.answerSoon();
    });
  }

  next(): Promise<IteratorResult<Uint8Array>> {
    if (this.queue.length > 0) return Promise.resolve({ done: false, value: this.take() });
    if (this.failure !== null) return Promise.reject(this.failure);
    if (this.ended) return Promise.resolve({ done: true, value: undefined });
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  return(): Promise<IteratorResult<Uint8Array>> {
    this.queue = [];
    this.queuedBytes = 0;
    // A released body is being read to its end (release()): closing it now would lose the connection.
    if (!this.released && !this.ended && !this.source.destroyed) this.source.destroy();
    return Promise.resolve({ done: true, value: undefined });
  }

  /** The reader is done with a whole answer: read the body's tail without keeping it (UpstreamBody.release). */
  release(): void {
    this.queue = [];
    this.queuedBytes = 0;
    if (this.released) return;
    this.released = true;
    if (this.ended || this.source.readableEnded || this.source.destroyed) return;
    this.source
      .dump({ limit: this.receivedBytes + RELEASE_TAIL_BYTES, signal: AbortSignal.timeout(RELEASE_TAIL_MS) })
      .catch(ignore);
  }

  private take(): Uint8Array {
    const chunk = joined(this.queue, this.queuedBytes);
    this.queue = [];
    this.queuedBytes = 0;
    if (this.source.isPaused()) this.source.resume();
    return chunk;
  }

  /** Answers the waiting read once the current turn has delivered all it will (undici emits a read's chunks synchronously). */
  private answerSoon(): void {
    if (this.waiter === null || this.answering) return;
    this.answering = true;
    queueMicrotask(() => {
      this.answering = false;
      const waiter = this.waiter;
      if (waiter === null) return;
      this.waiter = null;
      if (this.queue.length > 0) waiter.resolve({ done: false, value: this.take() });
      else if (this.failure !== null) waiter.reject(this.failure);
      else if (this.ended) waiter.resolve({ done: true, value: undefined });
      else this.waiter = waiter;
    });
  }
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

/** Upstream URLs seen at once: the providers' endpoints, a handful per configured model. */
const TARGETS_KEPT = 256;

/**
 * An upstream URL's origin and path, parsed once: undici's top-level `request(url)` parses the URL into a
 * new URL object and copies the options on every call (about 5 us of the gateway's CPU a request, under the
 * profiler), where the dispatcher's own `request` takes them as they are.
 */
class TargetCache {
  private readonly parsed = new Map<string, { origin: string; path: string }>();

  of(url: string): { origin: string; path: string } {
    let target = this.parsed.get(url);
    if (target === undefined) {
      const u = new URL(url);
      target = { origin: u.origin, path: `${u.pathname}${u.search}` };
      // Forgets everything rather than track use: the endpoints are a few dozen, so it never fills in practice.
      if (this.parsed.size >= TARGETS_KEPT) this.parsed.clear();
      this.parsed.set(url, target);
    }
    return target;
  }
}

/** The transport over one undici connection pool (unbounded per origin, as fetch's is). */
export function createNodeUpstreamClient(options: NodeUpstreamClientOptions = {}): NodeUpstreamClient {
  const dispatcher = new Agent({
    keepAliveTimeout: options.keepAliveTimeoutMs ?? 30_000,
    // Our own deadlines (connect, first token, between chunks, total) abort by signal; undici's 300 s
    // defaults stay only as a backstop.
  });

  const targets = new TargetCache();
  const http: UpstreamHttp = async (url, post) => {
    const { origin, path } = targets.of(url);
    const answer = await dispatcher.request({ origin, path, method: 'POST', headers: post.headers, body: post.body, signal: post.signal });
    const status = answer.statusCode;
    const headers = headersOf(answer.headers);
    const ok = status >= 200 && status < 300;
    if (NULL_BODY_STATUSES.has(status)) {
      await answer.body.dump();
      return { status, ok, headers, body: null, text: () => Promise.resolve('') };
    }
    const source = answer.body;
    // Destroying the body before anyone reads it (cancel() first) makes undici emit its abort as 'error';
    // with no reader yet to hear it, that would be an uncaught exception.
    source.on('error', ignore);
    let reading: NodeBodyIterator | null = null;
    const body: UpstreamBody = {
      [Symbol.asyncIterator]: () => (reading = new NodeBodyIterator(source)),
      cancel: async (reason) => {
        if (!source.readableEnded) source.destroy(reason instanceof Error ? reason : undefined);
      },
      release: () => reading?.release(),
    };
    return { status, ok, headers, body, text: () => source.text() };
  };
  return { http, close: () => dispatcher.destroy() };
}
