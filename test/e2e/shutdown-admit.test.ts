/**
 * Regression (found by an adversarial review): a completion whose reserve is in flight when shutdown interrupts the live ones is
 * not in `live` yet, so it is never interrupted; it runs on after the drain's deadlines, the connections are
 * destroyed and the store closed under it: its hold is left pending (its delivered part goes free once the
 * reaper voids it) and shutdown reports it unsettled.
 */
import type { ServerResponse } from 'node:http';
import Database from 'libsql';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/schema.js';
import { startFixtureServer, type FixtureServer } from '../providers/helpers/fixture-server.js';
import { chat, startTestGateway } from '../helpers/gateway.js';
import { sleep, sseChunk } from '../helpers/openai-sse.js';


let upstream: FixtureServer;
beforeAll(async () => {
  upstream = await startFixtureServer({
    long: async (_req, res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let i = 0; i < 400 && !res.destroyed; i++) {
        res.write(sseChunk({ content: ' word' }));
        await sleep(100);
      }
      if (!res.destroyed) res.end('data: [DONE]\n\n');
    },
  });
});
afterAll(() => upstream.close());

it('a completion admitted while shutdown interrupts is interrupted too, and settled before the store closes', async () => {
  const targets = [{ provider: 'p0', model: 'm' }];
  const config = parseConfig({
    server: { keepalive_ms: 100, shutdown_grace_ms: 0 },
    providers: { p0: { type: 'openai-compatible', base_url: upstream.baseUrl('long'), paid: false, timeouts: { total_ms: 60_000 } } },
    aliases: { 'svc-fast': { targets }, 'svc-code': { targets }, 'svc-smart': { targets } },
  });
  const gw = await startTestGateway({ config });
  const seeded = await gw.seed({ purchased: 1_000_000 });
  const ledger = gw.store.ledger as unknown as { reserve: (...a: unknown[]) => Promise<unknown> };
  const reserve = ledger.reserve.bind(ledger);
  let reserving = false;
  ledger.reserve = async (...a: unknown[]) => {
    reserving = true;
    await sleep(300); // a reserve that takes a moment (a loaded database, a retried lost reply)
    return reserve(...a);
  };
  const res = chat(gw, seeded.secret, { model: 'svc-fast', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 2000, stream: true });
  while (!reserving) await sleep(5);
  const stopping = gw.shutdown(0);
  const text = await res.then((r) => r.text()).catch((e) => `client error: ${String(e)}`);
  const unsettled = await stopping;
  const db = new Database(join(gw.dir, 'gateway.db'), { readonly: true });
  const holds = db.prepare('SELECT status FROM holds').all() as { status: string }[];
  db.close();
  expect(holds.map((h) => h.status)).toEqual(['voided']);
  expect(unsettled).toBe(0);
  expect(text).toContain('gateway_shutting_down');
}, 40_000);
