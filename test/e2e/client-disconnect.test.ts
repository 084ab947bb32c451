/** A client that hangs up mid-stream: the upstream call stops and the hold settles for what was delivered. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chat, pacedSandboxConfig, startTestGateway, type Seeded, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
let seeded: Seeded;

beforeAll(async () => {
  gw = await startTestGateway({ config: pacedSandboxConfig(0, 50) });
  seeded = await gw.seed({ purchased: 10_000 });
});
afterAll(() => gw.close());

async function waitFor(check: () => Promise<boolean>, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('client disconnect', () => {
  it('charges the prompt and the delivered tokens only, and closes the hold', async () => {
    const abort = new AbortController();
    const res = await chat(
      gw,
      seeded.secret,
      { model: 'svc-smart', messages: [{ role: 'user', content: 'Plan a trip, step by step.' }], stream: true, max_tokens: 1000 },
      { signal: abort.signal },
    );
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let received = '';
    while ((received.match(/"content":"[^"]+"/g) ?? []).length < 5) {
      const { value } = await reader.read();
      received += decoder.decode(value, { stream: true });
    }
    abort.abort();
    await waitFor(async () => (await gw.store.ledger.countPendingHolds(seeded.accountId)) === 0);

    const balance = await gw.store.ledger.balance(seeded.accountId, 'live');
    const charged = 10_000 - balance.purchased;
    const today = new Date().toISOString().slice(0, 10);
    // From yesterday: a run across midnight UTC records its first requests on the day before.
    const since = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const [row] = await gw.store.usage.rollup({ accountId: seeded.accountId, environment: 'live', startDay: since, endDay: today, model: null });
    expect(row?.requests).toBe(1);
    expect(row?.credits).toBe(charged);
    // At 50 tokens/s the abort lands after a handful of tokens: far below the 1000-token bound.
    expect(row?.completionTokens).toBeGreaterThanOrEqual(5);
    expect(row?.completionTokens).toBeLessThan(100);
    const worstCase = Math.ceil((row!.promptTokens * 25 + 1000 * 75) / 1000);
    expect(charged).toBeGreaterThan(0);
    expect(charged).toBeLessThan(worstCase / 5);
    expect(balance.reserved).toBe(0);
  });
});
