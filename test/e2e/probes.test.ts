/**
 * GET /healthz and GET /readyz (src/http/probes.ts, src/observability/readiness.ts) on real gateways:
 * both answer without a key, on every listener; /readyz is 503 with `checks.store: failed` while the
 * gateway's PostgreSQL is cut (through test/cluster/tcp-proxy.ts) and 200 again once it is back, and 503
 * with `checks.draining: draining` during a graceful shutdown while a stream is still being relayed.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/openai/chat-types.js';
import { simulateCompletion } from '../../src/providers/sandbox/simulator.js';
import { startTcpProxy, type TcpProxy } from '../cluster/tcp-proxy.js';
import { chat, pacedSandboxConfig, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { createTestSchema, dropTestSchema, POSTGRES_URL } from '../store/postgres-harness.js';

const ADMIN_TOKEN = 'probes-test-admin-token-0123456789abcdef';

interface Readiness {
  status: string;
  checks: Record<string, string>;
}

async function probe(origin: string, path: '/healthz' | '/readyz'): Promise<{ status: number; body: Readiness }> {
  const res = await fetch(`${origin}${path}`);
  return { status: res.status, body: (await res.json()) as Readiness };
}

async function until<T>(what: string, check: () => Promise<T | null>, ms = 10_000): Promise<T> {
  const deadline = performance.now() + ms;
  let last: unknown = null;
  for (;;) {
    try {
      const v = await check();
      if (v !== null) return v;
    } catch (e) {
      last = e;
    }
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? ` (last error: ${String(last)})` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('probes on a healthy gateway', () => {
  let gw: TestGateway;

  beforeAll(async () => {
    gw = await startTestGateway({ adminToken: ADMIN_TOKEN, adminListener: { host: '127.0.0.1', port: 0 } });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('answers /healthz and /readyz without a key, on the public and the admin listener', async () => {
    const origins = [new URL(gw.url).origin, new URL(gw.adminUrl as string).origin];
    expect(origins[0]).not.toBe(origins[1]);
    for (const origin of origins) {
      const health = await probe(origin, '/healthz');
      expect(health).toEqual({ status: 200, body: { status: 'ok' } });
      const ready = await probe(origin, '/readyz');
      expect(ready).toEqual({ status: 200, body: { status: 'ready', checks: { store: 'ok', draining: 'ok' } } });
    }
  });

  it('ignores a bad key (probes do not authenticate)', async () => {
    const res = await fetch(`${new URL(gw.url).origin}/readyz`, { headers: { authorization: 'Bearer svc_live_not-a-key' } });
    expect(res.status).toBe(200);
  });
});

describe('readiness follows the database (PostgreSQL behind a TCP proxy)', () => {
  let proxy: TcpProxy;
  let schema: string;
  let gw: TestGateway;
  let origin: string;

  beforeAll(async () => {
    schema = await createTestSchema();
    const target = new URL(POSTGRES_URL);
    proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
    const proxied = new URL(POSTGRES_URL);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(proxy.port);
    proxied.searchParams.set('schema', schema);
    gw = await startTestGateway({ databaseUrl: proxied.toString() });
    origin = new URL(gw.url).origin;
  });
  afterAll(async () => {
    proxy?.up();
    await gw?.close();
    await proxy?.close();
    if (schema) await dropTestSchema(schema);
  });

  it('is 200 with the database up, 503 (checks.store failed) while it is cut, 200 once it is back; /healthz stays 200', async () => {
    expect(await probe(origin, '/readyz')).toEqual({ status: 200, body: { status: 'ready', checks: { store: 'ok', draining: 'ok' } } });

    proxy.down();
    const startedAt = performance.now();
    const down = await probe(origin, '/readyz');
    const tookMs = performance.now() - startedAt;
    expect(down).toEqual({ status: 503, body: { status: 'not_ready', checks: { store: 'failed', draining: 'ok' } } });
    // Bounded by the readiness check's own timeout (1 s), not by the store's retries.
    expect(tookMs).toBeLessThan(2_500);
    // Still down a moment later; the process itself is alive.
    expect((await probe(origin, '/readyz')).status).toBe(503);
    expect(await probe(origin, '/healthz')).toEqual({ status: 200, body: { status: 'ok' } });

    proxy.up();
    const back = await until('/readyz to be 200 again', async () => {
      const r = await probe(origin, '/readyz');
      return r.status === 200 ? r : null;
    });
    expect(back.body).toEqual({ status: 'ready', checks: { store: 'ok', draining: 'ok' } });
  });
});

// ---- during a drain ----------------------------------------------------------------------------------

/** 5 tokens/s: an answer of 20 tokens takes 4 s. */
const TOKENS_PER_SECOND = 5;

/** A prompt whose sandbox answer (svc-smart) is at least `min` tokens long (the sandbox is deterministic). */
function longPrompt(min: number): ChatMessage[] {
  for (let i = 0; ; i++) {
    const messages: ChatMessage[] = [{ role: 'user', content: `Story ${i}: tell a long story about a lighthouse.` }];
    if (simulateCompletion({ messages, max_tokens: null }, 'sandbox-smart').tokenDeltas.length >= min) return messages;
  }
}

/** Sends a request's head in two writes; resolves with the raw response once the server closed. */
function rawRequest(port: number): { socket: Socket; connected: Promise<void>; finish(rest: string): Promise<string> } {
  const socket = connect(port, '127.0.0.1');
  let received = '';
  socket.setEncoding('utf8');
  socket.on('data', (d: string) => (received += d));
  const closed = new Promise<string>((resolve, reject) => {
    socket.once('close', () => resolve(received));
    socket.once('error', reject);
  });
  const connected = new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  return {
    socket,
    connected,
    finish(rest: string) {
      socket.write(rest);
      return closed;
    },
  };
}

describe('readiness during a drain', () => {
  let gw: TestGateway;

  beforeAll(async () => {
    gw = await startTestGateway({ config: pacedSandboxConfig(0, TOKENS_PER_SECOND) });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('is 503 (checks.draining) while a stream is still being relayed, and the stream finishes', async () => {
    const origin = new URL(gw.url).origin;
    const seeded = await gw.seed({ purchased: 1_000_000 });
    expect((await probe(origin, '/readyz')).status).toBe(200);

    // A slow stream: at 5 tokens/s, 20+ tokens take 4 s or more.
    const res = await chat(gw, seeded.secret, { model: 'svc-smart', messages: longPrompt(20), max_tokens: 20, stream: true });
    expect(res.status).toBe(200);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = '';
    const first = await reader.read();
    expect(first.done).toBe(false);
    text += decoder.decode(first.value, { stream: true });

    // A probe whose connection is open and whose request has begun when the drain starts (as a load
    // balancer's would be): the listener stops accepting new connections at shutdown, so a probe arriving
    // during the drain can only come on a connection the server already had.
    const pending = rawRequest(gw.port);
    await pending.connected;
    pending.socket.write('GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    await new Promise((r) => setTimeout(r, 50));

    const stopping = gw.shutdown(30_000);
    await new Promise((r) => setTimeout(r, 50));
    const raw = await pending.finish('Connection: close\r\n\r\n');
    const [head, body] = raw.split('\r\n\r\n') as [string, string];
    expect(head).toMatch(/^HTTP\/1\.1 503 /);
    expect(JSON.parse(body)).toEqual({ status: 'not_ready', checks: { store: 'ok', draining: 'draining' } });

    // The stream is still running at that point: it has not ended, and the gateway still counts it.
    expect(gw.completions.size).toBe(1);
    expect(text).not.toContain('[DONE]');
    // A new connection is refused during the drain (the listener is closed): not ready either way.
    await expect(fetch(`${origin}/readyz`)).rejects.toThrow();

    // It runs to its natural end inside the grace period.
    for (;;) {
      const r = await reader.read();
      if (r.done) break;
      text += decoder.decode(r.value, { stream: true });
    }
    expect(text).toContain('"finish_reason":"length"');
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(await stopping).toBe(0);
  });
});
