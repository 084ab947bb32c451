/**
 * An upstream SSE body -> StreamEvents, with the end-of-stream rules: `data: [DONE]` ends it; a body that
 * ends after a finish_reason but without [DONE] is accepted (several compatible servers omit it); a body
 * that ends before either is a cut.
 */
import { UpstreamError, type StreamEvent } from '../contract.js';
import { SseBatchDecoder, SseDecodeError, type SseEvent } from '../../streaming/sse-decode.js';
import { abortedError, bodyReadFailure, isRecord, protocolError } from '../upstream-failures.js';
import { payloadError } from './upstream-errors.js';
import { chunkEvents } from './wire-parse.js';
import type { UpstreamBody } from '../upstream-http.js';
import type { StopSignalLike } from '../../core/stop-signal.js';

type Step = IteratorResult<readonly StreamEvent[], void>;

const DONE: Step = Object.freeze({ done: true, value: undefined });

/** What follows the batch handed over last: the end, a fault, or the body's end without a finish (a cut). */
const END = Symbol('end');
const CUT = Symbol('cut');
type Ending = typeof END | typeof CUT | { error: unknown };

const ignore = (): void => {};

/**
 * One batch per network read: the events of every chunk that read completed. A fault in the middle of a read
 * (a malformed chunk, an error payload) is thrown at the next read, after the events before it.
 *
 * An iterator object that reads the body itself, not a generator over the SSE decoder's generator: those
 * two layers and the wrapper that cancelled an unread body cost 11 promises a request of the gateway's 158
 * (bench/lib/promise-count.mjs). Its steps:
 * - nothing happens before the first read; giving up before it cancels the body;
 * - the signal firing cancels the body, which ends a waiting read; the reader then throws abortedError;
 * - the body's iteration is closed (its `return`, which closes the upstream connection unless the body's end
 *   has arrived) when the reader stops before the body's end: a fault, or giving up;
 * - after `[DONE]`, at the next read, the body is released instead (UpstreamBody.release): the rest of it is
 *   read and dropped, so that the connection of a complete answer goes back to the pool;
 * - a body that ends after a finish_reason without [DONE] is accepted; before either, it is a cut.
 */
class ChatEventReader implements AsyncIterableIterator<readonly StreamEvent[]> {
  private source: AsyncIterator<Uint8Array> | null = null;
  private readonly sse = new SseBatchDecoder();
  private started = false;
  private closed = false;
  /** The body's iteration ended by itself: nothing to close. */
  private bodyDone = false;
  /** A finish_reason arrived: an end of body without [DONE] is a whole answer. */
  private finished = false;
  private ending: Ending | null = null;
  private readonly onAbort = (): void => {
    this.body.cancel(this.signal.reason).catch(ignore);
  };

  constructor(
    private readonly body: UpstreamBody,
    private readonly signal: StopSignalLike,
  ) {}

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<Step> {
    const ending = this.ending;
    if (ending !== null) {
      this.ending = null;
      return this.close(ending === END).then(() => {
        if (ending === END) return DONE;
        if (ending === CUT) throw this.signal.aborted ? abortedError(this.signal) : endedEarly();
        throw ending.error;
      });
    }
    if (this.closed) return Promise.resolve(DONE);
    if (!this.started) {
      this.started = true;
      if (this.signal.aborted) {
        this.closed = true;
        return this.body
          .cancel(this.signal.reason)
          .catch(ignore)
          .then(() => {
            throw abortedError(this.signal);
          });
      }
      this.signal.addEventListener('abort', this.onAbort, { once: true });
      this.source = this.body[Symbol.asyncIterator]();
    } else if (this.signal.aborted) {
      // Aborted between reads: the body was cancelled; nothing more is read from it.
      return this.failWith(abortedError(this.signal));
    }
    return this.read();
  }

  /** Gives up: before the first read, cancels the body; after, closes its iteration (or releases it after [DONE]). */
  return(): Promise<Step> {
    const complete = this.ending === END;
    this.ending = null;
    if (!this.started) {
      this.started = true;
      this.closed = true;
      return this.body.cancel().catch(ignore).then(() => DONE);
    }
    return this.close(complete).then(() => DONE);
  }

  private read(): Promise<Step> {
    return (this.source as AsyncIterator<Uint8Array>).next().then(
      (r) => this.received(r),
      (err: unknown) => {
        // Given up on while this read waited: the consumer has gone.
        if (this.closed) return DONE;
        this.bodyDone = true;
        this.closed = true;
        this.stopListening();
        // A read ended by our own cancel (the signal) is the abort, not a lost connection.
        throw this.signal.aborted ? abortedError(this.signal) : bodyReadFailure(err, this.signal);
      },
    );
  }

  private received(r: IteratorResult<Uint8Array>): Promise<Step> | Step {
    if (this.closed) return DONE;
    if (r.done === true) this.bodyDone = true;
    if (this.signal.aborted) return this.failWith(abortedError(this.signal));
    let events: readonly SseEvent[];
    try {
      events = r.done === true ? this.sse.end() : this.sse.push(r.value);
    } catch (e) {
      return this.failWith(
        e instanceof SseDecodeError ? protocolError(`upstream stream is not valid SSE: ${e.message}`) : bodyReadFailure(e, this.signal),
      );
    }
    const batch: StreamEvent[] = [];
    let after = this.collect(events, batch);
    if (after === null && r.done === true) after = this.finished ? END : CUT;
    if (batch.length > 0) {
      this.ending = after;
      return { done: false, value: batch };
    }
    if (after === null) return this.read();
    this.ending = after;
    return this.next();
  }

  /**
   * Appends the contract's events of a read's SSE events to `batch`, up to [DONE] or a fault; returns what
   * ends the stream there, if anything did.
   */
  private collect(events: readonly SseEvent[], batch: StreamEvent[]): Ending | null {
    let after: Ending | null = null;
    try {
      for (const { data, event } of events) {
        if (data === '[DONE]') {
          after = END;
          break;
        }
        if (data.length === 0) continue;
        const payload = parseChunk(data);
        if (event === 'error' && isRecord(payload)) throw payloadError(payload);
        chunkEvents(payload, batch);
      }
    } catch (e) {
      after = { error: bodyReadFailure(e, this.signal) };
    }
    for (const ev of batch) if (ev.type === 'delta' && ev.finishReason !== null) this.finished = true;
    return after;
  }

  /** Closes the body's iteration, then fails with `error`. */
  private failWith(error: unknown): Promise<never> {
    return this.close().then(() => {
      throw error;
    });
  }

  /**
   * Stops reading before the body's end. After a whole answer (`complete`: [DONE] was read) the body is
   * released, which keeps its connection for the next call when the end follows soon; otherwise its
   * iteration is ended, which closes the connection if the end has not arrived (an upstream still sending
   * an answer nobody reads).
   */
  private close(complete = false): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    this.stopListening();
    const source = this.source;
    if (this.bodyDone || source === null) return Promise.resolve();
    if (complete && this.body.release !== undefined) {
      this.body.release();
      return Promise.resolve();
    }
    if (source.return === undefined) return Promise.resolve();
    return source.return().then(ignore, ignore);
  }

  /** Drops the abort listener: once reading is over, an abort has no body to cancel. */
  private stopListening(): void {
    this.signal.removeEventListener('abort', this.onAbort);
  }
}

function endedEarly(): UpstreamError {
  return protocolError('upstream stream ended early (no finish_reason and no [DONE])');
}

/** The events of an SSE body; abandoning them at any point, even before the first read, cancels the body. */
export function readChatStream(body: UpstreamBody, signal: StopSignalLike): AsyncIterableIterator<readonly StreamEvent[]> {
  return new ChatEventReader(body, signal);
}

function parseChunk(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    throw protocolError(`upstream sent a malformed stream chunk: ${data.slice(0, 120)}`);
  }
}

/** The events of an SSE body; abandoning them at any point cancels the body. */
export const cancellableEvents = readChatStream;
