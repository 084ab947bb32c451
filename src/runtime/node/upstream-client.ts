/**
 * The Node runtime's upstream transport (../../providers/upstream-http.ts), on undici's `dispatch`.
 *
 * On edge runtimes the adapters get the platform's fetch. On Node, the global fetch (undici's fetch
 * underneath) costs 300 to 400 us of CPU per upstream call on these machines, most of it in the WHATWG fetch
 * algorithm (request and response objects, header guards, body mixins). undici's `request` costs less, yet
 * still builds per call an async resource, a Node Readable for the body (with its state, buffer and events)
 * and an abort listener through Node's validating `addAbortListener`; this transport takes the dispatcher's
 * handler calls (the answer's head, each chunk, the end) and answers the adapters' reads from them directly
 * (docs/performance.md, issue 20).
 *
 * What the adapters rely on is kept: the status, the headers, a streamed body whose early end closes the
 * upstream connection, and abort by signal at any point. Redirects are not followed: an LLM API answers a
 * POST directly, and a 3xx reaches the adapter as the non-2xx it is (docs/providers.md).
 */
import { Agent, errors, type Dispatcher } from 'undici';
import type { IncomingHttpHeaders } from 'node:http';
import { responseTooLarge } from '../../providers/upstream-byte-cap.js';
import type { UpstreamBody, UpstreamHeaders, UpstreamHttp, UpstreamPost, UpstreamReply } from '../../providers/upstream-http.js';
import type { StopSignalLike } from '../../core/stop-signal.js';

/** Statuses whose response has no body by definition. */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/** undici's header record (names lower-cased) read as `Headers.get` reads: repeated values joined by ", ". */
function headersOf(raw: IncomingHttpHeaders): UpstreamHeaders {
  return {
    get(name) {
      const value = raw[name.toLowerCase()];
      if (value === undefined) return null;
      return Array.isArray(value) ? value.join(', ') : value;
    },
  };
}

/** Bytes buffered ahead of the reader before the socket is paused. */
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

const DONE: IteratorResult<Uint8Array> = Object.freeze({ done: true, value: undefined });

/** A signal's reason as the Error undici's abort takes (a signal aborted without one gives undici's own). */
function abortError(reason: unknown): Error {
  return reason instanceof Error ? reason : new errors.RequestAbortedError();
}

/**
 * One upstream call: the dispatcher's handler, the answer's promise, and the body the adapter reads.
 *
 * The body's chunks are queued as undici delivers them and a waiting read is answered one microtask later,
 * with everything that turn delivered: an SSE upstream writes one HTTP chunk per event, so one network read
 * of 20 events is 20 calls in one synchronous turn, and handing each to the reader on its own sent every
 * event through every layer above it one asynchronous step at a time (docs/performance.md, "Eighth session").
 */
class UpstreamCall implements Dispatcher.DispatchHandler, UpstreamBody, AsyncIterator<Uint8Array> {
  private controller: Dispatcher.DispatchController | null = null;
  /** Until the answer's head arrives (or the call fails first). */
  private answer: { resolve: (reply: UpstreamReply) => void; reject: (error: Error) => void } | null;
  /** The signal fired before undici gave this call a controller: it is aborted as soon as it has one. */
  private pendingAbort: Error | null = null;
  private listening = true;

  private queue: Uint8Array[] = [];
  private queuedBytes = 0;
  /** Every byte delivered so far, to bound what a released body may still read. */
  private receivedBytes = 0;
  private tailLimit = Infinity;
  private tailTimer: NodeJS.Timeout | null = null;
  /** The reader wants no more of the body: what still arrives is dropped. */
  private discarding = false;
  private ended = false;
  private failure: Error | null = null;
  private waiter: { resolve: (result: IteratorResult<Uint8Array>) => void; reject: (error: Error) => void } | null = null;
  private answering = false;

  constructor(
    private readonly signal: StopSignalLike,
    /** UpstreamPost.maxBytes: past it the body fails with responseTooLarge and the call is ended. */
    private readonly maxBytes: number,
    resolve: (reply: UpstreamReply) => void,
    reject: (error: Error) => void,
  ) {
    this.answer = { resolve, reject };
    signal.addEventListener('abort', this.onAbort);
  }

  /** The signal's 'abort': the call ends where it is. */
  private readonly onAbort = (): void => {
    const reason = abortError(this.signal.reason);
    if (this.controller !== null) {
      this.controller.abort(reason);
      return;
    }
    // Still waiting for a connection: the caller hears at once; undici drops the request when it reaches a socket.
    this.pendingAbort = reason;
    this.fail(reason);
  };

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.pendingAbort !== null) controller.abort(this.pendingAbort);
  }

  onResponseStart(controller: Dispatcher.DispatchController, status: number, headers: IncomingHttpHeaders): void {
    // 1xx informational heads come before the answer's own.
    if (status < 200) return;
    const answer = this.answer;
    if (answer === null) return;
    this.answer = null;
    const nullBody = NULL_BODY_STATUSES.has(status);
    // Such an answer has no body by definition; what an upstream sends anyway (a 205 may carry one) is
    // read within the released tail's bounds, then the connection is closed.
    if (nullBody) this.discardTail();
    answer.resolve({
      status,
      ok: status >= 200 && status < 300,
      headers: headersOf(headers),
      body: nullBody ? null : this,
      text: () => (nullBody ? Promise.resolve('') : this.text()),
    });
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.receivedBytes += chunk.byteLength;
    if (this.discarding) {
      if (this.receivedBytes > this.tailLimit) controller.abort(new errors.RequestAbortedError('released body longer than its tail bound'));
      return;
    }
    if (this.receivedBytes > this.maxBytes) {
      // What came before is still read; then the read fails, as the cap on a body fails it.
      const tooLarge = responseTooLarge(this.maxBytes);
      this.discarding = true;
      this.fail(tooLarge);
      controller.abort(tooLarge);
      return;
    }
    this.queue.push(chunk);
    this.queuedBytes += chunk.byteLength;
    // Paused even with a read waiting, so one answer is never larger than the read-ahead (take() resumes).
    if (this.queuedBytes >= READ_AHEAD_BYTES) controller.pause();
    if (this.waiter !== null) this.answerSoon();
  }

  onResponseEnd(): void {
    this.ended = true;
    this.finished();
    this.answerSoon();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.fail(error);
  }

  [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    return this;
  }

  next(): Promise<IteratorResult<Uint8Array>> {
    if (this.queue.length > 0) return Promise.resolve({ done: false, value: this.take() });
    if (this.failure !== null) return Promise.reject(this.failure);
    if (this.ended) return Promise.resolve(DONE);
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  /** Leaving a loop over the body early: an answer still arriving is cut, which closes its connection. */
  return(): Promise<IteratorResult<Uint8Array>> {
    this.dropQueue();
    if (!this.discarding) this.stop(new errors.RequestAbortedError());
    return Promise.resolve(DONE);
  }

  cancel(reason?: unknown): Promise<void> {
    this.dropQueue();
    this.stop(abortError(reason));
    return Promise.resolve();
  }

  /** The reader is done with a whole answer: read the body's tail without keeping it (UpstreamBody.release). */
  release(): void {
    this.dropQueue();
    if (this.discarding) return;
    this.discardTail();
  }

  /** The whole body as text (a body's bytes are UTF-8 here: every upstream answers JSON or SSE). */
  async text(): Promise<string> {
    const parts: Uint8Array[] = [];
    let bytes = 0;
    for await (const chunk of this) {
      parts.push(chunk);
      bytes += chunk.byteLength;
    }
    return Buffer.concat(parts, bytes).toString('utf8');
  }

  /** What is left of the body is read and dropped, up to RELEASE_TAIL_BYTES more and for RELEASE_TAIL_MS at most. */
  private discardTail(): void {
    this.discarding = true;
    if (this.ended || this.failure !== null) return;
    this.tailLimit = this.receivedBytes + RELEASE_TAIL_BYTES;
    this.tailTimer = setTimeout(() => this.stop(new errors.RequestAbortedError('released body did not end in time')), RELEASE_TAIL_MS);
    this.tailTimer.unref();
    this.controller?.resume();
  }

  private stop(reason: Error): void {
    this.discarding = true;
    if (this.ended || this.failure !== null) return;
    if (this.controller !== null) this.controller.abort(reason);
    else this.pendingAbort ??= reason;
  }

  private fail(error: Error): void {
    if (this.ended || this.failure !== null) return;
    this.failure = error;
    this.finished();
    const answer = this.answer;
    if (answer !== null) {
      this.answer = null;
      answer.reject(error);
      return;
    }
    this.answerSoon();
  }

  /** The call is over: the signal and the tail's timer are let go. */
  private finished(): void {
    if (this.listening) {
      this.listening = false;
      this.signal.removeEventListener('abort', this.onAbort);
    }
    if (this.tailTimer !== null) {
      clearTimeout(this.tailTimer);
      this.tailTimer = null;
    }
  }

  private dropQueue(): void {
    this.queue = [];
    this.queuedBytes = 0;
  }

  private take(): Uint8Array {
    const chunk = joined(this.queue, this.queuedBytes);
    this.dropQueue();
    if (this.controller?.paused === true) this.controller.resume();
    return chunk;
  }

  /** Answers the waiting read once the current turn has delivered all it will (undici delivers a read's chunks synchronously). */
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
      else if (this.ended) waiter.resolve(DONE);
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
 * An upstream URL's origin and path, parsed once: the dispatcher takes them apart, and `new URL` on every
 * call cost about 5 us of the gateway's CPU a request, under the profiler.
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
  const http: UpstreamHttp = (url: string, post: UpstreamPost) =>
    new Promise<UpstreamReply>((resolve, reject) => {
      if (post.signal.aborted) {
        reject(abortError(post.signal.reason));
        return;
      }
      const { origin, path } = targets.of(url);
      const call = new UpstreamCall(post.signal, post.maxBytes ?? Infinity, resolve, reject);
      dispatcher.dispatch({ origin, path, method: 'POST', headers: post.headers, body: post.body }, call);
    });
  return { http, close: () => dispatcher.destroy() };
}
