/**
 * An Idempotency-Key binds its first request for 24 hours, then the reaper's pass forgets it: the key may be
 * used again (for another request), as Stripe's keys are.
 */
import { join } from 'node:path';
import Database from 'libsql';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { parseConfig, DEFAULT_CONFIG } from '../../src/config/schema.js';
import { chat, startTestGateway, type Seeded, type TestGateway } from '../helpers/gateway.js';

const clock = new ManualClock(Date.UTC(2026, 10, 25, 9));
let gw: TestGateway;
let seeded: Seeded;

beforeAll(async () => {
  const config = structuredClone(DEFAULT_CONFIG) as { server?: object; providers: { sandbox: { pace: unknown } } };
  config.providers.sandbox.pace = { time_to_first_token_ms: 0, tokens_per_second: 0 };
  config.server = { reaper_interval_ms: 100 };
  gw = await startTestGateway({ config: parseConfig(config), clock });
  seeded = await gw.seed({ purchased: 100_000 });
});
afterAll(() => gw.close());

const ask = (content: string) => ({ model: 'svc-fast', messages: [{ role: 'user', content }], max_tokens: 20 });
function records(): number {
  const db = new Database(join(gw.dir, 'gateway.db'), { readonly: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM idempotency_records').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

const send = (body: object) => chat(gw, seeded.secret, body, { headers: { authorization: `Bearer ${seeded.secret}`, 'content-type': 'application/json', 'idempotency-key': 'daily-report-1' } });

it('is bound to its first request for 24 hours, then purged and free again', async () => {
  expect((await send(ask('First request.'))).status).toBe(200);
  clock.advance(23 * 3600_000);
  const reused = await send(ask('Another request.'));
  expect(reused.status).toBe(409);
  expect(((await reused.json()) as { error: { code: string } }).error.code).toBe('idempotency_key_reused');

  expect(records()).toBe(1);
  clock.advance(2 * 3600_000);
  // The reaper (every 100 ms here) deletes the record.
  const until = Date.now() + 3000;
  while (records() > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  expect(records()).toBe(0);
  const fresh = await send(ask('Another request.'));
  expect(fresh.status).toBe(200);
  expect(fresh.headers.get('idempotent-replayed')).toBeNull();
});
