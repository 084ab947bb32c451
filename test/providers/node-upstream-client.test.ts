import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodeUpstreamClient } from '../../src/runtime/node/upstream-client.js';

/** A real upstream whose behaviour each test picks by path. */
let server: http.Server;
let base: string;
const closedStreams: string[] = [];
const seen: { method: string; headers: http.IncomingHttpHeaders; body: string }[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      switch (req.url) {
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

async function waitFor(check: () => boolean, ms = 2000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('the Node upstream client (undici request behind a fetch signature)', () => {
  it('sends the method, headers and body, and answers with status, headers and the body', async () => {
    const client = createNodeUpstreamClient();
    try {
      const res = await client.fetch(`${base}/json`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer k' },
        body: '{"q":1}',
      });
      expect(res.status).toBe(200);
      expect(res.ok).toBe(true);
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(res.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
      expect(await res.json()).toEqual({ ok: true });
      const last = seen.at(-1);
      expect(last?.method).toBe('POST');
      expect(last?.headers.authorization).toBe('Bearer k');
      expect(last?.headers['content-length']).toBe('7');
      expect(last?.body).toBe('{"q":1}');
    } finally {
      await client.close();
    }
  });

  it('gives a null body for 204 instead of throwing', async () => {
    const client = createNodeUpstreamClient();
    try {
      const res = await client.fetch(`${base}/empty`, { method: 'POST', body: '{}' });
      expect(res.status).toBe(204);
      expect(res.body).toBeNull();
    } finally {
      await client.close();
    }
  });

  it('does not follow redirects: a 3xx reaches the adapter as a non-2xx', async () => {
    const client = createNodeUpstreamClient();
    try {
      const res = await client.fetch(`${base}/redirect`, { method: 'POST', body: '{}' });
      expect(res.status).toBe(307);
      expect(res.ok).toBe(false);
      expect(await res.text()).toBe('moved');
    } finally {
      await client.close();
    }
  });

  it('streams the body as it arrives, and cancelling it closes the upstream connection', async () => {
    const client = createNodeUpstreamClient();
    try {
      const before = closedStreams.length;
      const res = await client.fetch(`${base}/endless`, { method: 'POST', body: '{}' });
      const reader = res.body!.getReader();
      const first = await reader.read();
      expect(new TextDecoder().decode(first.value)).toContain('data: first');
      await reader.cancel();
      await waitFor(() => closedStreams.length > before);
    } finally {
      await client.close();
    }
  });

  it('aborts by signal before the answer (rejects) and while reading the body (the read fails)', async () => {
    const client = createNodeUpstreamClient();
    try {
      const early = new AbortController();
      const pending = client.fetch(`${base}/silent`, { method: 'POST', body: '{}', signal: early.signal });
      setTimeout(() => early.abort(new Error('deadline')), 50);
      await expect(pending).rejects.toThrow();

      const before = closedStreams.length;
      const late = new AbortController();
      const res = await client.fetch(`${base}/endless`, { method: 'POST', body: '{}', signal: late.signal });
      const reader = res.body!.getReader();
      await reader.read();
      late.abort(new Error('client went away'));
      await expect((async () => {
        for (;;) if ((await reader.read()).done) return 'ended';
      })()).rejects.toThrow();
      await waitFor(() => closedStreams.length > before);
    } finally {
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
      await expect(client.fetch(`http://127.0.0.1:${port}/json`, { method: 'POST', body: '{}' })).rejects.toThrow(
        /ECONNREFUSED/,
      );
    } finally {
      await client.close();
    }
  });
});
