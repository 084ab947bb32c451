/**
 * The write deadline of answers that are not streams (src/runtime/node/write-deadline.ts), on a real
 * node:http server: a client that reads nothing of an answer larger than the kernel's buffers is cut at
 * the deadline, instead of holding its connection and the unsent rest of the answer in memory forever; a
 * client that reads gets all of it, however slowly; a stream is left to its own deadline.
 */
import { connect, type AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withWriteDeadline } from '../../src/runtime/node/write-deadline.js';

const DEADLINE_MS = 400;
/** Far above what loopback's send and receive buffers hold together (a few MB). */
const BODY_BYTES = 64 * 1024 * 1024;
const body = new Uint8Array(BODY_BYTES).fill(0x61);

let server: Server;
let port: number;

beforeAll(async () => {
  const app = (request: Request): Response => {
    if (new URL(request.url).pathname === '/stream') {
      let sent = 0;
      return new Response(
        new ReadableStream<Uint8Array>({
          pull(controller) {
            if (sent >= BODY_BYTES) return controller.close();
            sent += 1024 * 1024;
            controller.enqueue(body.subarray(0, 1024 * 1024));
          },
        }),
        { headers: { 'content-type': 'text/event-stream' } },
      );
    }
    return new Response(body, { headers: { 'content-type': 'application/json' } });
  };
  server = await new Promise<Server>((resolve) => {
    const s = serve({ fetch: withWriteDeadline(app, DEADLINE_MS), port: 0, hostname: '127.0.0.1' }, () => resolve(s as Server)) as Server;
  });
  port = (server.address() as AddressInfo).port;
  server.on('connection', (socket) => {
    const index = closedAt.push(null) - 1;
    socket.on('close', () => {
      closedAt[index] = performance.now();
    });
  });
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** When each server-side connection closed, in the order they were accepted. */
const closedAt: (number | null)[] = [];

/**
 * Sends a GET and never reads. Resolves with how long after the request the server closed its side, or
 * null if it had not after `waitMs`. Read on the server's side: a client that reads nothing does not see
 * the connection close either (it is in the same unread state that the deadline exists for).
 */
function neverRead(path: string, waitMs: number): Promise<number | null> {
  return new Promise((resolve) => {
    const index = closedAt.length;
    const started = performance.now();
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(`GET ${path} HTTP/1.1\r\nhost: x\r\n\r\n`);
      socket.pause();
    });
    socket.on('error', () => undefined);
    setTimeout(() => {
      const at = closedAt[index] ?? null;
      socket.destroy();
      resolve(at === null ? null : at - started);
    }, waitMs);
  });
}

describe('write deadline of a non-streaming answer', () => {
  it('cuts a client that reads nothing of a large answer at the deadline', async () => {
    const cutAfter = await neverRead('/answer', DEADLINE_MS * 5);
    expect(cutAfter).not.toBeNull();
    expect(cutAfter as number).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
  });

  it('lets a client that reads have all of it', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/answer`);
    expect((await res.arrayBuffer()).byteLength).toBe(BODY_BYTES);
  });

  it('lets a slow reader have all of it, though the whole answer takes several times the deadline', async () => {
    // A server of its own with a longer deadline, so a loaded machine's late timers cannot pass it: the reader
    // takes 4 MB, then stops for 250 ms (a sixth of the deadline), until the 64 MB are in: about 4 s.
    const slowDeadlineMs = 1_500;
    const slow = await new Promise<Server>((resolve) => {
      const s = serve({ fetch: withWriteDeadline(() => new Response(body, { headers: { 'content-type': 'application/json' } }), slowDeadlineMs), port: 0, hostname: '127.0.0.1' }, () =>
        resolve(s as Server),
      ) as Server;
    });
    try {
      const started = performance.now();
      const received = await new Promise<number>((resolve, reject) => {
        let bytes = 0;
        let burst = 0;
        const socket = connect((slow.address() as AddressInfo).port, '127.0.0.1', () => socket.write('GET /answer HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n'));
        socket.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          burst += chunk.length;
          if (burst >= 4 * 1024 * 1024) {
            burst = 0;
            socket.pause();
            setTimeout(() => socket.resume(), 250);
          }
        });
        socket.on('close', () => resolve(bytes));
        socket.on('error', reject);
      });
      expect(received).toBeGreaterThan(BODY_BYTES);
      // A deadline on the whole answer's length would have cut it.
      expect(performance.now() - started).toBeGreaterThan(slowDeadlineMs * 2);
    } finally {
      await new Promise<void>((resolve) => slow.close(() => resolve()));
    }
  }, 60_000);

  it('leaves a stream to its own deadline (src/completions/streaming.ts)', async () => {
    expect(await neverRead('/stream', DEADLINE_MS * 4)).toBeNull();
  });
});
