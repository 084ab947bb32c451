/**
 * Drives a stream's pulled source (src/streaming/byte-source.ts) straight onto a node:http response: each
 * pull's bytes are one socket write, the next pull waits while the socket's buffer is full, and a client
 * that goes away cancels the source. What @hono/node-server does for a Web stream, without the stream: a
 * Web stream costs a reader, a queue and several promises per chunk.
 */
import type { ServerResponse } from 'node:http';
import type { ByteSink, ByteSource } from '../../streaming/byte-source.js';

export function relayStream(outgoing: ServerResponse, status: number, headers: Record<string, string>, source: ByteSource): void {
  /** The sink was closed or errored, or the client went away: nothing more is written or pulled. */
  let ended = false;
  let wrote = false;
  const sink: ByteSink = {
    enqueue(bytes) {
      if (ended) return;
      wrote = true;
      outgoing.write(bytes);
    },
    close() {
      if (ended) return;
      ended = true;
      outgoing.end();
    },
    error(reason) {
      if (ended) return;
      ended = true;
      outgoing.destroy(reason instanceof Error ? reason : new Error(String(reason)));
    },
  };
  let wake: (() => void) | null = null;
  const resume = (): void => {
    const w = wake;
    wake = null;
    w?.();
  };
  outgoing.on('drain', resume);
  outgoing.once('close', () => {
    outgoing.off('drain', resume);
    if (!ended) {
      ended = true;
      void source.cancel();
    }
    resume();
  });
  outgoing.writeHead(status, headers);
  source.start(sink);
  // The headers go out with the opening frames, or now when there are none: a client sees the stream open.
  if (!wrote && !ended) outgoing.flushHeaders();
  void (async () => {
    try {
      while (!ended) {
        // The socket's buffer is full: the next pull waits for a drain, so the source sees a client holding back.
        if (outgoing.writableNeedDrain) {
          await new Promise<void>((resolve) => (wake = resolve));
          continue;
        }
        await source.pull(sink);
      }
    } catch (e) {
      sink.error(e);
    }
  })();
}
