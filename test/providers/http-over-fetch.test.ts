/**
 * The adapters' transport over a WHATWG fetch (src/providers/upstream-http.ts, what edge runtimes use), given
 * the attempt's StopSignal rather than an AbortSignal: fetch gets an AbortSignal that follows it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StopSignal } from '../../src/core/stop-signal.js';
import { httpOverFetch } from '../../src/providers/upstream-http.js';

let server: http.Server;
let base: string;
let closed = 0;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    // One frame now, then one every 20 ms until the client goes away.
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: first\n\n');
    const timer = setInterval(() => res.write('data: more\n\n'), 20);
    res.on('close', () => {
      clearInterval(timer);
      closed++;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('httpOverFetch with a StopSignal', () => {
  it('ends the body when the signal stops it mid-answer, with the signal\'s reason, and closes the connection', async () => {
    const stop = new StopSignal();
    const before = closed;
    const res = await httpOverFetch(fetch)(`${base}/`, { headers: {}, body: '{}', signal: stop });
    const reason = new Error('deadline');
    const read = (async () => {
      for await (const chunk of res.body!) {
        void chunk;
        stop.abort(reason);
      }
    })();
    await expect(read).rejects.toBe(reason);
    const until = Date.now() + 2000;
    while (closed === before && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    expect(closed).toBeGreaterThan(before);
  });

  it('does not call when the signal has stopped already', async () => {
    const stop = new StopSignal();
    const reason = new Error('gone');
    stop.abort(reason);
    await expect(httpOverFetch(fetch)(`${base}/`, { headers: {}, body: '{}', signal: stop })).rejects.toBe(reason);
  });
});
