/**
 * Regression (found by an adversarial review): an idempotent retry after a crashed owner takes over the crashed run's pending hold
 * (same derived id) as it is, lease included. If that lease already ran out, the reaper voids the hold under
 * the live completion before its first renewal; the settle then finds it final and charges 0.
 */
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/schema.js';
import { idempotentHoldId, requestFingerprint } from '../../src/http/idempotency.js';
import { startFixtureServer, type FixtureServer } from '../providers/helpers/fixture-server.js';
import { startTestGateway } from '../helpers/gateway.js';
import { sleep, sseChunk } from '../helpers/openai-sse.js';


let upstream: FixtureServer;
beforeAll(async () => {
  upstream = await startFixtureServer({
    slow: async (_req, res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(sseChunk({ role: 'assistant', content: '' }));
      for (const w of ['The', ' keeper', ' counted', ' ships.']) {
        await sleep(200);
        res.write(sseChunk({ content: w }));
      }
      res.write(sseChunk({}, 'stop'));
      res.write(sseChunk({}, null, { prompt_tokens: 31, completion_tokens: 48 }));
      res.end('data: [DONE]\n\n');
    },
  });
});
afterAll(() => upstream.close());

it('a retry that takes over a crashed run\'s hold is charged', async () => {
  const targets = [{ provider: 'p0', model: 'm' }];
  const config = parseConfig({
    server: { hold_lease_ms: 3000, reaper_interval_ms: 250 },
    providers: { p0: { type: 'openai-compatible', base_url: upstream.baseUrl('slow'), paid: false } },
    aliases: { 'svc-fast': { targets }, 'svc-code': { targets }, 'svc-smart': { targets } },
  });
  const gw = await startTestGateway({ config });
  const seeded = await gw.seed({ purchased: 1_000_000 });
  const body = { model: 'svc-fast', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 50 };
  const raw = JSON.stringify(body);
  // The state a crashed instance leaves: its claim lapsed, its hold pending with a lease that ran out
  // (not yet reaped: the reaper runs every reaper_interval_ms).
  await gw.store.idempotency.claim({ keyId: seeded.keyId, idempotencyKey: 'k1', fingerprint: await requestFingerprint(raw, null), leaseMs: 1, ttlMs: 86_400_000 });
  const holdId = await idempotentHoldId(seeded.keyId, 'k1');
  await gw.store.ledger.reserve({ holdId, keyId: seeded.keyId, amount: 5000, leaseMs: 1 });
  await sleep(2);
  const res = await fetch(`${gw.url}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${seeded.secret}`, 'content-type': 'application/json', 'idempotency-key': 'k1' },
    body: raw,
  });
  const json = (await res.json()) as { choices: { message: { content: string } }[]; svc: { credits_used: number } };
  await gw.close();
  expect(res.status).toBe(200);
  expect(json.svc.credits_used).toBeGreaterThan(0);
}, 20_000);
