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
  /** Chunks written so far. */
  let writes = 0;
  const sink: ByteSink = {
    enqueue(bytes) {
      if (ended) return;
      writes++;
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
  // The client left before the stream began (a response destroyed while the hold was reserved): its
  // 'close' has been emitted already, so nothing below would hear of it.
  if (outgoing.destroyed) {
    cancel(source);
    return;
  }
  outgoing.on('drain', resume);
  outgoing.once('close', () => {
    outgoing.off('drain', resume);
    if (!ended) {
      ended = true;
      cancel(source);
    }
    resume();
  });
  try {
    outgoing.writeHead(status, headers);
    source.start(sink);
  } catch (e) {
    // Nothing a request can cause (the headers are the gateway's own): the stream still ends its hold.
    if (!ended) {
      ended = true;
      cancel(source);
    }
    outgoing.destroy(e instanceof Error ? e : new Error(String(e)));
    return;
  }
  // The headers go out with the opening frames, or now when there are none: a client sees the stream open.
  if (writes === 0 && !ended) outgoing.flushHeaders();
  void (async () => {
    try {
      while (!ended) {
        // The socket's buffer is full: the next pull waits for a drain, so the source sees a client holding back.
        if (outgoing.writableNeedDrain) {
          await new Promise<void>((resolve) => (wake = resolve));
          continue;
        }
        const before = writes;
        await source.pull(sink);
        // A pull that wrote nothing is not repeated, as a Web stream does not repeat it: the source is ending
        // (its last frames, if any, come through the sink when its hold has settled), and pulling again would
        // spin without yielding to the event loop.
        if (writes === before) return;
      }
    } catch (e) {
      sink.error(e);
    }
  })();
}

/** The source's own ending never rejects (src/completions/streaming.ts); a bug there must not crash the process. */
function cancel(source: ByteSource): void {
  source.cancel().catch(() => undefined);
}
