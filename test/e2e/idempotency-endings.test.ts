/**
 * Review reproductions (not part of the change): idempotency and stream-ending races.
 */
import type { ServerResponse } from 'node:http';
import Database from 'libsql';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/schema.js';
import { startFixtureServer, type FixtureServer } from '../providers/helpers/fixture-server.js';
import { chat, startTestGateway, type Seeded, type TestGateway } from '../helpers/gateway.js';
import { sleep, sseChunk } from '../helpers/openai-sse.js';


let upstream: FixtureServer;
const gateways: TestGateway[] = [];

beforeAll(async () => {
  upstream = await startFixtureServer({
    status_500: (_req, res) => {
      res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'boom', type: 'server_error' } }));
    },
    ok: (_req, res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(sseChunk({ role: 'assistant', content: '' }));
      for (const w of ['The', ' keeper', ' counted', ' ships.']) res.write(sseChunk({ content: w }));
      res.write(sseChunk({}, 'stop'));
      res.write(sseChunk({}, null, { prompt_tokens: 31, completion_tokens: 48 }));
      res.end('data: [DONE]\n\n');
    },
  });
});

afterAll(async () => {
  await Promise.all(gateways.map((g) => g.close()));
  await upstream.close();
});

async function gatewayFor(scenarios: string[]): Promise<{ gw: TestGateway; seeded: Seeded }> {
  const deadlines = { connect_ms: 2000, first_token_ms: 3000, between_chunks_ms: 3000, total_ms: 10_000 };
  const providers = Object.fromEntries(
    scenarios.map((s, i) => [`p${i}`, { type: 'openai-compatible', base_url: upstream.baseUrl(s), paid: false, timeouts: deadlines }]),
  );
  const targets = scenarios.map((_, i) => ({ provider: `p${i}`, model: 'm' }));
  const config = parseConfig({
    server: { keepalive_ms: 100 },
    providers,
    aliases: { 'svc-fast': { targets }, 'svc-code': { targets }, 'svc-smart': { targets } },
  });
  const gw = await startTestGateway({ config });
  gateways.push(gw);
  return { gw, seeded: await gw.seed({ purchased: 1_000_000 }) };
}

const body = (stream: boolean) => ({ model: 'svc-fast', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 50, stream });

describe('review: idempotency', () => {
  it('retrying one Idempotency-Key through an upstream outage: every retry is a clean 502, never a 500', async () => {
    const { gw, seeded } = await gatewayFor(['status_500']);
    const statuses: number[] = [];
    const codes: string[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await chat(gw, seeded.secret, body(false), { headers: { authorization: `Bearer ${seeded.secret}`, 'content-type': 'application/json', 'idempotency-key': 'retry-me' } });
      statuses.push(res.status);
      codes.push(((await res.json()) as { error: { code: string } }).error.code);
    }
    expect(statuses).toEqual(Array(10).fill(502));
  });

  it('a streaming client that hangs up while its hold settles: the key is released or recorded, not stuck in flight', async () => {
    const { gw, seeded } = await gatewayFor(['ok']);
    // A slow settle (a loaded PostgreSQL, or the ledger retries of a database blip).
    const ledger = gw.store.ledger as unknown as { settle: (...a: unknown[]) => Promise<unknown> };
    const settle = ledger.settle.bind(ledger);
    ledger.settle = async (...a: unknown[]) => {
      await sleep(300);
      return settle(...a);
    };
    const proto = (globalThis as unknown as { ReadableStreamDefaultController: { prototype: { enqueue: (c: unknown) => void } } }).ReadableStreamDefaultController.prototype;
    const enqueue = proto.enqueue;
    const thrown: string[] = [];
    proto.enqueue = function (this: unknown, c: unknown) {
      try {
        return enqueue.call(this, c);
      } catch (e) {
        thrown.push(`${String(e)} writing ${new TextDecoder().decode(c as Uint8Array).slice(0, 60)}`);
        throw e;
      }
    };
    const headers = { authorization: `Bearer ${seeded.secret}`, 'content-type': 'application/json', 'idempotency-key': 'stream-key' };
    const abort = new AbortController();
    const res = await chat(gw, seeded.secret, body(true), { headers, signal: abort.signal });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    let text = '';
    while (!text.includes('"finish_reason":"stop"')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    // The client has its answer and goes, as many clients do once they see finish_reason.
    await sleep(50);
    abort.abort();
    await sleep(1500);
    const db = new Database(join(gw.dir, 'gateway.db'), { readonly: true });
    const rows = db.prepare('SELECT state FROM idempotency_records').all() as { state: string }[];
    const holds = db.prepare('SELECT status FROM holds').all() as { status: string }[];
    db.close();
    // Recorded (the answer completed) or released (the client's leaving ended it): never stuck in flight.
    expect(rows.filter((r) => r.state !== 'completed')).toEqual([]);
    expect(holds.map((h) => h.status)).toEqual(['settled']);
    const retry = await chat(gw, seeded.secret, body(true), { headers });
    proto.enqueue = enqueue;
    expect(retry.status).not.toBe(409);
    // Nothing was written into the stream the client had cancelled.
    expect(thrown).toEqual([]);
  });
});
