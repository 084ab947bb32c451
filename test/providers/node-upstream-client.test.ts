import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UpstreamError } from '../../src/providers/contract.js';
import { createNodeUpstreamClient, type NodeUpstreamClient } from '../../src/runtime/node/upstream-client.js';

/** A real upstream whose behaviour each test picks by path. */
let server: http.Server;
let base: string;
const closedStreams: string[] = [];
const seen: { method: string; url: string; headers: http.IncomingHttpHeaders; body: string }[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      switch (req.url?.split('?')[0]) {
        case '/json':
          res.writeHead(200, { 'content-type': 'application/json', 'set-cookie': ['a=1', 'b=2'] });
          res.end('{"ok":true}');
          return;
        case '/empty':
          res.writeHead(204);
          res.end();
          return;
        case '/redirect':
          res.writeHead(307, { location: '/json' });
          res.end('moved');
          return;
        case '/endless': {
          // One frame now, then one every 20 ms until the client goes away.
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write('data: first\n\n');
          const timer = setInterval(() => res.write('data: more\n\n'), 20);
          res.on('close', () => {
            clearInterval(timer);
            closedStreams.push(req.url ?? '');
          });
          return;
        }
        case '/short-sse':
          res.writeHead(200, { 'content-type': 'text/event-stream', 'x-port': String(req.socket.remotePort) });
          res.end('data: a\n\ndata: [DONE]\n\n');
          return;
        case '/many': {
          // 200 numbered lines, each its own write, to be read slowly (the client pauses and resumes).
          res.writeHead(200, { 'content-type': 'text/plain' });
          let i = 0;
          const more = (): void => {
            while (i < 200) if (!res.write(`${i++}\n`)) return void res.once('drain', more);
            res.end();
          };
          more();
          return;
        }
        case '/burst': {
          // The headers first; a moment later 20 frames, each an HTTP chunk of its own, in one network write.
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.flushHeaders();
          setTimeout(() => {
            res.socket?.cork();
            for (let i = 0; i < 20; i++) res.write(`data: ${i}\n\n`);
            res.end();
            process.nextTick(() => res.socket?.uncork());
          }, 50);
          return;
        }
        case '/large': {
          // 320 KiB in 1 KiB writes, well past the transport's read-ahead, each KiB filled with its index.
          res.writeHead(200, { 'content-type': 'application/octet-stream' });
          let i = 0;
          const more = (): void => {
            while (i < 320) if (!res.write(Buffer.alloc(1024, i++ % 256))) return void res.once('drain', more);
            res.end();
          };
          more();
          return;
        }
        case '/early-hints':
          // A 103 informational head before the answer's own.
          res.writeEarlyHints({ link: '</style.css>; rel=preload' });
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{"hinted":true}');
          return;
        case '/reset-content-endless': {
          // A 205 has no body by definition; this one sends one anyway, without end.
          res.writeHead(205, { 'content-type': 'text/plain' });
          const timer = setInterval(() => res.write(Buffer.alloc(16 * 1024, 65)), 1);
          res.on('close', () => {
            clearInterval(timer);
            closedStreams.push(req.url ?? '');
          });
          return;
        }
        case '/silent':
          // Never answers: only the caller's signal ends the call.
          return;
        default:
          res.writeHead(404);
          res.end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** Runs `fn` with a fresh transport, closed afterwards whatever happens. */
async function withClient(fn: (client: NodeUpstreamClient) => Promise<void>): Promise<void> {
  const client = createNodeUpstreamClient();
  try {
    await fn(client);
  } finally {
    await client.close();
  }
}

function post(signal: AbortSignal = new AbortController().signal): { headers: Record<string, string>; body: string; signal: AbortSignal } {
  return { headers: { 'content-type': 'application/json' }, body: '{}', signal };
}

async function waitFor(check: () => boolean, ms = 2000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('the Node upstream transport (undici dispatch)', () => {
  it('sends the method, headers and body, and answers with status, headers and the body', () =>
    withClient(async (client) => {
      const res = await client.http(`${base}/json`, {
        headers: { 'content-type': 'application/json', authorization: 'Bearer k' },
        body: '{"q":1}',
        signal: new AbortController().signal,
      });
      expect(res.status).toBe(200);
      expect(res.ok).toBe(true);
      expect(res.headers.get('Content-Type')).toBe('application/json');
      expect(res.headers.get('set-cookie')).toBe('a=1, b=2');
      expect(res.headers.get('x-not-there')).toBeNull();
      expect(JSON.parse(await res.text())).toEqual({ ok: true });
      const last = seen.at(-1);
      expect(last?.method).toBe('POST');
      expect(last?.headers.authorization).toBe('Bearer k');
      expect(last?.headers['content-length']).toBe('7');
      expect(last?.body).toBe('{"q":1}');
    }));

  it('sends the path and query of each URL, the same URL again and another one alike', () =>
    withClient(async (client) => {
      // Gemini's streaming endpoint carries `?alt=sse`; the client keeps each URL's origin and path once parsed.
      for (const url of [`${base}/json?alt=sse`, `${base}/json?alt=sse`, `${base}/json`, `${base}/v1/../json?key=a%20b`]) {
        const res = await client.http(url, post());
        expect(res.status).toBe(200);
        await res.text();
      }
      expect(seen.slice(-4).map((s) => s.url)).toEqual(['/json?alt=sse', '/json?alt=sse', '/json', '/json?key=a%20b']);
    }));

  it('gives a null body for 204 instead of throwing', () =>
    withClient(async (client) => {
      const res = await client.http(`${base}/empty`, post());
      expect(res.status).toBe(204);
      expect(res.body).toBeNull();
    }));

  it('does not follow redirects: a 3xx reaches the adapter as a non-2xx', () =>
    withClient(async (client) => {
      const res = await client.http(`${base}/redirect`, post());
      expect(res.status).toBe(307);
      expect(res.ok).toBe(false);
      expect(await res.text()).toBe('moved');
    }));

  it('fails the read past maxBytes with the cap\'s error, after what came before it, and closes the connection', () =>
    withClient(async (client) => {
      const before = closedStreams.length;
      const res = await client.http(`${base}/endless`, { ...post(), maxBytes: 200 });
      let received = 0;
      const read = (async () => {
        for await (const chunk of res.body!) received += chunk.byteLength;
      })();
      const err: unknown = await read.catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UpstreamError);
      expect((err as UpstreamError).message).toContain('exceeded 200 bytes');
      // 'data: first' and the 'data: more' frames up to the cap were read; the frame crossing it was not.
      expect(received).toBeGreaterThan(0);
      expect(received).toBeLessThanOrEqual(200);
      await waitFor(() => closedStreams.length > before);
      await expect(client.http(`${base}/large`, { ...post(), maxBytes: 1024 }).then((r) => r.text())).rejects.toBeInstanceOf(UpstreamError);
    }));

  it('gives a null body for a 205 that sends one anyway, and closes its connection within the tail bounds', () =>
    withClient(async (client) => {
      const before = closedStreams.length;
      const res = await client.http(`${base}/reset-content-endless`, { ...post(), maxBytes: 1000 });
      expect(res.status).toBe(205);
      expect(res.body).toBeNull();
      expect(await res.text()).toBe('');
      await waitFor(() => closedStreams.length > before, 3000);
    }));

  it('answers with the final status after an informational 1xx head', () =>
    withClient(async (client) => {
      const res = await client.http(`${base}/early-hints`, post());
      expect(res.status).toBe(200);
      expect(await res.text()).toBe('{"hinted":true}');
    }));

  it('streams the body as it arrives, and leaving the loop over it closes the upstream connection', () =>
    withClient(async (client) => {
      const before = closedStreams.length;
      const res = await client.http(`${base}/endless`, post());
      for await (const chunk of res.body!) {
        expect(new TextDecoder().decode(chunk)).toContain('data: first');
        break;
      }
      await waitFor(() => closedStreams.length > before);
    }));

  it('cancel() before reading closes the upstream connection', () =>
    withClient(async (client) => {
      const before = closedStreams.length;
      const res = await client.http(`${base}/endless`, post());
      await res.body!.cancel();
      await waitFor(() => closedStreams.length > before);
    }));

  it('aborts by signal before the answer (rejects) and while reading the body (the read fails)', () =>
    withClient(async (client) => {
      const early = new AbortController();
      const pending = client.http(`${base}/silent`, post(early.signal));
      setTimeout(() => early.abort(new Error('deadline')), 50);
      await expect(pending).rejects.toThrow();

      const before = closedStreams.length;
      const late = new AbortController();
      const res = await client.http(`${base}/endless`, post(late.signal));
      await expect((async () => {
        for await (const chunk of res.body!) {
          void chunk;
          late.abort(new Error('client went away'));
        }
        return 'ended';
      })()).rejects.toThrow();
      await waitFor(() => closedStreams.length > before);
    }));

  it('stopping at the end of a finished answer keeps the connection for the next call', () =>
    withClient(async (client) => {
      const ports: (string | null)[] = [];
      for (let call = 0; call < 3; call++) {
        const res = await client.http(`${base}/short-sse`, post());
        ports.push(res.headers.get('x-port'));
        let text = '';
        for await (const chunk of res.body!) {
          text += new TextDecoder().decode(chunk);
          if (text.includes('[DONE]')) break;
        }
        expect(text).toContain('data: a');
        // The pool takes a connection back a moment after its answer completed.
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(new Set(ports).size).toBe(1);
    }));

  it('hands a waiting read every chunk one network read delivered, joined, not one chunk per read', () =>
    withClient(async (client) => {
      const res = await client.http(`${base}/burst`, post());
      const reads: string[] = [];
      for await (const chunk of res.body!) reads.push(new TextDecoder().decode(chunk));
      // Each HTTP chunk is a 'data' event of undici's; a reader that took them one at a time made every layer
      // above it run once per SSE event (docs/performance.md, "Eighth session").
      expect(reads).toEqual([Array.from({ length: 20 }, (_, i) => `data: ${i}\n\n`).join('')]);
    }));

  it('a reader slower than the upstream gets every byte of a body larger than the read-ahead, in order', () =>
    withClient(async (client) => {
      const res = await client.http(`${base}/large`, post());
      const parts: Uint8Array[] = [];
      let largest = 0;
      for await (const chunk of res.body!) {
        parts.push(chunk);
        largest = Math.max(largest, chunk.byteLength);
        // Slow enough that the upstream fills the read-ahead and the transport pauses the socket.
        await new Promise((r) => setTimeout(r, 5));
      }
      const body = Buffer.concat(parts);
      expect(body.byteLength).toBe(320 * 1024);
      for (let k = 0; k < 320; k++) expect(body[k * 1024]).toBe(k % 256);
      // Joined reads stay near the read-ahead: about 65 KiB measured, against about 257 KiB when the
      // transport never paused the socket.
      expect(largest).toBeLessThan(160 * 1024);
    }));

  it('a slow reader gets every chunk in order', () =>
    withClient(async (client) => {
      const res = await client.http(`${base}/many`, post());
      let text = '';
      let reads = 0;
      for await (const chunk of res.body!) {
        text += new TextDecoder().decode(chunk);
        if (++reads % 10 === 0) await new Promise((r) => setTimeout(r, 1));
      }
      expect(text.trim().split('\n').map(Number)).toEqual(Array.from({ length: 200 }, (_, i) => i));
    }));

  it('cancel() before any read neither crashes the process nor leaves a later read waiting', async () => {
    const client = createNodeUpstreamClient();
    const uncaught: unknown[] = [];
    const onUncaught = (e: unknown): void => void uncaught.push(e);
    process.on('uncaughtException', onUncaught);
    try {
      const res = await client.http(`${base}/endless`, post());
      await res.body!.cancel();
      // undici reports the destroy a turn later; the stream's events are gone by the time a read starts.
      await new Promise((r) => setTimeout(r, 20));
      const read = (async () => {
        for await (const chunk of res.body!) void chunk;
        return 'ended';
      })();
      const outcome = await Promise.race([
        read.then((v) => v, () => 'rejected'),
        new Promise((r) => setTimeout(() => r('still waiting'), 1000)),
      ]);
      expect(outcome).toBe('rejected');
      expect(uncaught).toEqual([]);
    } finally {
      process.off('uncaughtException', onUncaught);
      await client.close();
    }
  });

  it('rejects when the upstream is not listening', async () => {
    const client = createNodeUpstreamClient();
    const spare = http.createServer();
    await new Promise<void>((resolve) => spare.listen(0, '127.0.0.1', resolve));
    const port = (spare.address() as AddressInfo).port;
    await new Promise<void>((resolve) => spare.close(() => resolve()));
    try {
      await expect(client.http(`http://127.0.0.1:${port}/json`, post())).rejects.toThrow(
        /ECONNREFUSED/,
      );
    } finally {
      await client.close();
    }
  });
});
