/**
 * Regression (found by an adversarial review): shutdown interrupts a stream whose client is not reading (finish() from onInterrupt);
 * the client goes away while the hold settles; finish() then writes into the cancelled stream and throws,
 * out of a `void finish(...)`: an unhandled rejection (on Node 20, the process dies mid-shutdown).
 */
import { connect } from 'node:net';
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/schema.js';
import { startFixtureServer, type FixtureServer } from '../providers/helpers/fixture-server.js';
import { startTestGateway } from '../helpers/gateway.js';
import { sleep, sseChunk } from '../helpers/openai-sse.js';


let upstream: FixtureServer;
beforeAll(async () => {
  upstream = await startFixtureServer({
    flood: async (_req, res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const token = 'x'.repeat(200);
      for (let i = 0; i < 40_000 && !res.destroyed; i++) {
        if (!res.write(sseChunk({ content: token }))) await new Promise((r) => res.once('drain', r));
      }
      if (!res.destroyed) res.end('data: [DONE]\n\n');
    },
  });
});
afterAll(() => upstream.close());

it('shutdown + client gone during the settle: no unhandled rejection', async () => {
  const rejections: unknown[] = [];
  const onRejection = (e: unknown) => rejections.push(e);
  // Vitest installs its own listener; we record ours too.
  process.on('unhandledRejection', onRejection);
  const deadlines = { connect_ms: 2000, first_token_ms: 3000, between_chunks_ms: 3000, total_ms: 20_000 };
  const config = parseConfig({
    server: { keepalive_ms: 100, write_timeout_ms: 60_000 },
    providers: { p0: { type: 'openai-compatible', base_url: upstream.baseUrl('flood'), paid: false, timeouts: deadlines } },
    aliases: { 'svc-fast': { targets: [{ provider: 'p0', model: 'm' }] }, 'svc-code': { targets: [{ provider: 'p0', model: 'm' }] }, 'svc-smart': { targets: [{ provider: 'p0', model: 'm' }] } },
  });
  const gw = await startTestGateway({ config });
  const seeded = await gw.seed({ purchased: 10_000_000 });
  const ledger = gw.store.ledger as unknown as { settle: (...a: unknown[]) => Promise<unknown> };
  const settle = ledger.settle.bind(ledger);
  let settling = false;
  ledger.settle = async (...a: unknown[]) => {
    settling = true;
    await sleep(400);
    return settle(...a);
  };
  const url = new URL(gw.url);
  const socket = connect(Number(url.port), url.hostname);
  const payload = JSON.stringify({ model: 'svc-fast', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 60_000, stream: true });
  socket.write(
    `POST /v1/chat/completions HTTP/1.1\r\nhost: ${url.host}\r\nauthorization: Bearer ${seeded.secret}\r\n` +
      `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(payload)}\r\n\r\n${payload}`,
  );
  socket.pause(); // never reads: the gateway's writes back up, no pull is pending
  socket.on('error', () => undefined);
  await sleep(1500);
  const stopping = gw.shutdown(0);
  const until = Date.now() + 3000;
  while (!settling && Date.now() < until) await sleep(5);
  expect(settling).toBe(true);
  socket.destroy(); // the client goes while the hold settles
  expect(await stopping).toBe(0);
  await sleep(200);
  process.off('unhandledRejection', onRejection);
  expect(rejections).toEqual([]);
}, 30_000);
