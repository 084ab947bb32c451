/**
 * Bytes -> server-sent events. Line splitting, field parsing and multi-line `data` are eventsource-parser's
 * job; this layer owns the byte-to-text step (a streaming TextDecoder, so a UTF-8 sequence split across two
 * network reads decodes once whole), the end-of-body edge cases, and releasing the body when the consumer stops.
 * The body is an upstream transport's (../providers/upstream-http.ts): bytes as an async iterable.
 */
import { createParser, type EventSourceParser } from 'eventsource-parser';
import type { UpstreamBody } from '../providers/upstream-http.js';
import type { StopSignalLike } from '../core/stop-signal.js';

export interface SseEvent {
  /** The `data` field; several `data:` lines of one event are joined with `\n`. */
  data: string;
  /** The `event` field, undefined when the server sent none (not defaulted to `message`). */
  event?: string | undefined;
  id?: string | undefined;
}

export interface SseDecodeOptions {
  /** Called for each comment line (`: keepalive`), without the leading colon and space. */
  onComment?: (text: string) => void;
  /** Stop reading (and cancel the body) when this fires; the iteration then ends without error. */
  signal?: StopSignalLike;
  /**
   * Characters one unfinished line or event may buffer before the stream is refused. Guards memory against
   * an upstream that never sends a line break.
   */
  maxBufferSize?: number;
}

/** The stream is not SSE we can safely buffer (today: an event larger than `maxBufferSize`). */
export class SseDecodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SseDecodeError';
  }
}

const DEFAULT_MAX_BUFFER = 8 * 1024 * 1024;
const CR = 13;

/** Iterates the events of an SSE body one by one; see decodeSseBatches. */
export async function* decodeSse(body: UpstreamBody, options: SseDecodeOptions = {}): AsyncGenerator<SseEvent, void, undefined> {
  for await (const batch of decodeSseBatches(body, options)) yield* batch;
}

/** What a read that completed no event answers: shared, never written to. */
const NO_EVENTS: readonly SseEvent[] = Object.freeze([]);

/**
 * The synchronous core of the decoding: bytes in, the events they completed out. Consumers that read
 * their body themselves (the chat adapter's event reader, ../providers/openai-compatible/event-stream.ts)
 * use it directly, without an asynchronous generator's steps between them and the bytes.
 */
export class SseBatchDecoder {
  private pending: SseEvent[] = [];
  private overflow: string | null = null;
  private endsWithCr = false;
  private readonly decoder = new TextDecoder();
  private readonly parser: EventSourceParser;

  constructor(options: Pick<SseDecodeOptions, 'onComment' | 'maxBufferSize'> = {}) {
    this.parser = createParser({
      // The parser makes a new object per event, with exactly these fields: kept as it is.
      onEvent: (e) => this.pending.push(e),
      onComment: options.onComment,
      // Unknown fields and bad `retry` values are ignored, as the SSE spec tells clients to do.
      onError: (err) => {
        if (err.type === 'max-buffer-size-exceeded') this.overflow = err.message;
      },
      maxBufferSize: options.maxBufferSize ?? DEFAULT_MAX_BUFFER,
    });
  }

  /** The events `chunk` completed, often none; throws SseDecodeError past the buffer bound. */
  push(chunk: Uint8Array): readonly SseEvent[] {
    this.feed(this.decoder.decode(chunk, { stream: true }));
    return this.take();
  }

  /** At the body's end: the events its last bytes completed. */
  end(): readonly SseEvent[] {
    this.feed(this.decoder.decode());
    // The parser holds back a trailing CR in case an LF follows; at the end of the body nothing will, so the
    // CR is a complete line terminator (a CR-only stream's last blank line would otherwise be lost).
    if (this.endsWithCr) this.parser.feed('\n');
    // An event without its terminating blank line is dropped, as the SSE spec requires.
    return this.take();
  }

  private feed(text: string): void {
    if (text.length === 0) return;
    this.endsWithCr = text.charCodeAt(text.length - 1) === CR;
    this.parser.feed(text);
    if (this.overflow !== null) throw new SseDecodeError(this.overflow);
  }

  private take(): readonly SseEvent[] {
    if (this.pending.length === 0) return NO_EVENTS;
    const batch = this.pending;
    this.pending = [];
    return batch;
  }
}

/**
 * Iterates the events of an SSE body, as the batches that each network read completed (never empty).
 * Consumers on the hot path take them a batch at a time: every step through an async generator costs
 * promises, and an upstream's 18 events usually arrive in one or two reads. Ending the iteration early
 * (break, return, throw) ends the body's iteration, which is what releases an upstream HTTP connection.
 */
export async function* decodeSseBatches(
  body: UpstreamBody,
  options: SseDecodeOptions = {},
): AsyncGenerator<readonly SseEvent[], void, undefined> {
  const decoder = new SseBatchDecoder(options);
  const signal = options.signal;
  if (signal?.aborted) {
    await body.cancel(signal.reason).catch(() => {});
    return;
  }
  // Cancelling ends a read that is waiting for bytes; the loop below then stops without error.
  const onAbort = (): void => {
    body.cancel(signal?.reason).catch(() => {});
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    try {
      // Leaving this loop early (a return, the consumer stopping, an error) ends the body's iteration.
      for await (const chunk of body) {
        const batch = decoder.push(chunk);
        if (batch.length > 0) yield batch;
        if (signal?.aborted) return;
      }
    } catch (err) {
      if (signal?.aborted && !(err instanceof SseDecodeError)) return;
      throw err;
    }
    if (signal?.aborted) return;
    const last = decoder.end();
    if (last.length > 0) yield last;
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
}
