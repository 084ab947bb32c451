/**
 * 600 concurrent requests, streaming and not, against one account whose credits cover only part of
 * them. The ledger must never go negative, must equal grants minus settled charges, and must leave no
 * hold open.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chat, pacedSandboxConfig, startTestGateway, type Seeded, type TestGateway } from '../helpers/gateway.js';

const REQUESTS = 600;
const GRANT = 400;

let gw: TestGateway;
let seeded: Seeded;

beforeAll(async () => {
  // A little pacing keeps many holds open at the same time.
  gw = await startTestGateway({ config: pacedSandboxConfig(5, 2000) });
  seeded = await gw.seed({ purchased: GRANT });
});
afterAll(() => gw.close());

describe('concurrent requests on one account', () => {
  it('never overdraws and settles every hold exactly once', async () => {
    let observedNegative = false;
    let polling = true;
    const poller = (async () => {
      while (polling) {
        const b = await gw.store.ledger.balance(seeded.accountId, 'live');
        if (b.purchased < 0 || b.reserved < 0 || b.earned < 0) observedNegative = true;
        await new Promise((r) => setTimeout(r, 2));
      }
    })();

    const statuses = await Promise.all(
      Array.from({ length: REQUESTS }, async (_, i) => {
        const stream = i % 2 === 0;
        const res = await chat(gw, seeded.secret, {
          model: i % 3 === 0 ? 'svc-smart' : 'svc-fast',
          messages: [{ role: 'user', content: `Request number ${i}: summarize the weather.` }],
          max_tokens: 16,
          stream,
        });
        await res.text();
        return res.status;
      }),
    );
    polling = false;
    await poller;

    const ok = statuses.filter((s) => s === 200).length;
    const refused = statuses.filter((s) => s === 402).length;
    expect(ok + refused).toBe(REQUESTS);
    expect(ok).toBeGreaterThan(0);
    expect(refused).toBeGreaterThan(0);
    expect(observedNegative).toBe(false);

    const balance = await gw.store.ledger.balance(seeded.accountId, 'live');
    const today = new Date().toISOString().slice(0, 10);
    // From yesterday: a run across midnight UTC records its first requests on the day before.
    const since = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const rows = await gw.store.usage.rollup({
      accountId: seeded.accountId,
      environment: 'live',
      startDay: since,
      endDay: today,
      model: null,
    });
    const settled = rows.reduce((sum, r) => sum + r.credits, 0);
    const requests = rows.reduce((sum, r) => sum + r.requests, 0);
    expect(balance.reserved).toBe(0);
    expect(await gw.store.ledger.countPendingHolds(seeded.accountId)).toBe(0);
    expect(balance.purchased).toBe(GRANT - settled);
    expect(balance.purchased).toBeGreaterThanOrEqual(0);
    expect(requests).toBe(ok);
    expect((await gw.store.ledger.audit()).findings).toEqual([]);
  });
});
