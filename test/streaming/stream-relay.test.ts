/**
 * The Node entry's stream relay (src/runtime/node/stream-relay.ts) on a real node:http server and socket:
 * it pulls as a Web stream would, never spins on a source that is ending, and hears of a client that left
 * even before it began.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { relayStream } from '../../src/runtime/node/stream-relay.js';
import type { ByteSink, ByteSource } from '../../src/streaming/byte-source.js';

const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);

let server: Server | null = null;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r) ?? r(undefined));
  server = null;
});

/** A server whose one request is handed to `onRequest`; resolves with its port. */
async function serve(onRequest: (res: ServerResponse) => void): Promise<number> {
  server = createServer((_req, res) => onRequest(res));
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** A raw HTTP client: what it received, whole, once the server ended the response. */
function get(port: number, { destroyAfterMs }: { destroyAfterMs?: number } = {}): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let got = '';
    socket.on('data', (d: Buffer) => {
      got += d.toString();
      if (got.includes('0\r\n\r\n')) socket.end();
    });
    socket.on('close', () => resolve(got));
    socket.on('error', () => undefined);
    socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    if (destroyAfterMs !== undefined) setTimeout(() => socket.destroy(), destroyAfterMs);
  });
}

describe('relayStream', () => {
  it('does not pull again after a pull that wrote nothing, and the event loop runs while the source ends', async () => {
    let pulls = 0;
    let timersRan = 0;
    let sinkOf: ByteSink | null = null;
    const source: ByteSource = {
      start(sink) {
        sinkOf = sink;
        sink.enqueue(bytes('a'));
      },
      async pull(sink) {
        pulls++;
        // A relay that spins would starve the event loop, this test's timeout included: fail it instead.
        if (pulls > 100) throw new Error('pulled again and again without yielding');
        if (pulls === 1) {
          sink.enqueue(bytes('b'));
          return;
        }
        // Ending: the last frames come later, when (say) the hold has settled.
        if (pulls === 2) {
          const tick = setInterval(() => timersRan++, 1);
          setTimeout(() => {
            clearInterval(tick);
            sinkOf?.enqueue(bytes('c'));
            sinkOf?.close();
          }, 50);
        }
      },
      cancel: async () => undefined,
    };
    const port = await serve((res) => relayStream(res, 200, { 'content-type': 'text/event-stream' }, source));
    const raw = await get(port);
    expect(raw.startsWith('HTTP/1.1 200')).toBe(true);
    expect(raw).toMatch(/\r\n1\r\na\r\n1\r\nb\r\n1\r\nc\r\n0\r\n\r\n$/);
    expect(pulls).toBe(2);
    expect(timersRan).toBeGreaterThan(3);
  });

  it('a response destroyed before the relay began: the source is cancelled once and never started or pulled', async () => {
    const calls: string[] = [];
    const source: ByteSource = {
      start: () => void calls.push('start'),
      pull: async () => {
        calls.push('pull');
        if (calls.length > 100) throw new Error('pulled again and again without yielding');
      },
      cancel: async () => void calls.push('cancel'),
    };
    let relayed: () => void = () => undefined;
    const done = new Promise<void>((resolve) => (relayed = resolve));
    const port = await serve((res) => {
      res.destroy();
      setImmediate(() => {
        relayStream(res, 200, {}, source);
        relayed();
      });
    });
    await get(port);
    await done;
    await new Promise((r) => setTimeout(r, 20));
    expect(calls).toEqual(['cancel']);
  });

  it('a client that leaves mid-stream cancels the source once, and nothing is pulled after', async () => {
    const calls: string[] = [];
    const source: ByteSource = {
      start: (sink) => sink.enqueue(bytes('open')),
      // Each pull waits on the "upstream" a while, then writes.
      pull: (sink) =>
        new Promise((resolve) =>
          setTimeout(() => {
            calls.push('pull');
            sink.enqueue(bytes('x'));
            resolve();
          }, 20),
        ),
      cancel: async () => void calls.push('cancel'),
    };
    const port = await serve((res) => relayStream(res, 200, {}, source));
    await get(port, { destroyAfterMs: 70 });
    await new Promise((r) => setTimeout(r, 100));
    expect(calls.filter((c) => c === 'cancel')).toHaveLength(1);
    expect(calls.lastIndexOf('pull')).toBeLessThan(calls.indexOf('cancel') + 2);
  });

  it('writes what one step of the stream enqueues in one socket write (node:http corks a tick\'s writes): the headers with the opening, the last frames with the end', async () => {
    const socketWrites: number[] = [];
    const source: ByteSource = {
      start(sink) {
        sink.enqueue(bytes('open'));
      },
      async pull(sink) {
        await new Promise((r) => setTimeout(r, 5));
        // A read's frames, then in another step the closing frames, [DONE] and the end, as a stream ends.
        sink.enqueue(bytes('delta'));
        setTimeout(() => {
          sink.enqueue(bytes('closing'));
          sink.enqueue(bytes('[DONE]'));
          sink.close();
        }, 5);
      },
      cancel: async () => undefined,
    };
    const port = await serve((res) => {
      // Every write the socket hands to the system, one or several buffers each.
      const socket = res.socket as unknown as { _writev: (chunks: unknown[], cb: unknown) => void; _write: (chunk: unknown, enc: unknown, cb: unknown) => void };
      const writev = socket._writev.bind(socket);
      const write = socket._write.bind(socket);
      socket._writev = (chunks, cb) => {
        socketWrites.push(chunks.length);
        writev(chunks, cb);
      };
      socket._write = (chunk, enc, cb) => {
        socketWrites.push(1);
        write(chunk, enc, cb);
      };
      relayStream(res, 200, { 'content-type': 'text/event-stream' }, source);
    });
    const raw = await get(port);
    expect(raw).toMatch(/\r\n4\r\nopen\r\n5\r\ndelta\r\n7\r\nclosing\r\n6\r\n\[DONE\]\r\n0\r\n\r\n$/);
    // Headers and opening; the delta; the closing frames, [DONE] and the chunked encoding's end.
    expect(socketWrites).toHaveLength(3);
  });
});
