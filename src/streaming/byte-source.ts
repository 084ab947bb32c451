/**
 * A stream of bytes as a pulled source, runtime-neutral: a Web stream is made of one
 * (`new ReadableStream(source)`), and the Node entry drives one straight onto its socket
 * (src/runtime/node/stream-relay.ts) without a Web stream in between.
 */

/** Where a stream's bytes go: a ReadableStream's controller is one. */
export interface ByteSink {
  enqueue(bytes: Uint8Array): void;
  close(): void;
  error(reason: unknown): void;
}

/**
 * A stream's bytes, pulled: the shape of a ReadableStream's underlying source, so the same object is a Web
 * stream (`new ReadableStream(source)`) or is driven straight onto a socket. `pull` is called again only
 * after its promise settled, and while the reader wants more; `cancel` once, when the reader went away
 * before the sink was closed.
 */
export interface ByteSource {
  start(sink: ByteSink): void;
  pull(sink: ByteSink): Promise<void>;
  cancel(): Promise<void>;
}
