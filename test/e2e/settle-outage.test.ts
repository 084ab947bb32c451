/**
 * Regression (found by an adversarial review): a non-streaming answer whose settle committed but whose replies were lost for longer
 * than the ~3.35 s retry budget: the client gets 503 (the answer is thrown away) although it was charged,
 * and the Idempotency-Key is released, so its retry runs (and is charged) again: one answer, two charges.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { StoreError } from '../../src/store/errors.js';
import { startTestGateway, type Seeded, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
let seeded: Seeded;
beforeAll(async () => {
  gw = await startTestGateway();
  seeded = await gw.seed({ purchased: 1_000_000 });
});
afterAll(() => gw.close());

it('a settle that committed but whose reply was lost for 4 s: the client is not charged twice for one answer', async () => {
  const ledger = gw.store.ledger as unknown as { settle: (...a: unknown[]) => Promise<unknown> };
  const settle = ledger.settle.bind(ledger);
  let outageUntil = 0;
  let first = true;
  ledger.settle = async (...a: unknown[]) => {
    if (first) {
      first = false;
      await settle(...a); // COMMIT
      outageUntil = Date.now() + 4000; // then the database is unreachable for 4 s
      throw new StoreError('unavailable', 'connection reset');
    }
    if (Date.now() < outageUntil) throw new StoreError('unavailable', 'connection refused');
    return settle(...a);
  };
  const headers = { authorization: `Bearer ${seeded.secret}`, 'content-type': 'application/json', 'idempotency-key': 'pay-once' };
  const body = JSON.stringify({ model: 'svc-fast', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 20 });
  const r1 = await fetch(`${gw.url}/chat/completions`, { method: 'POST', headers, body });
  const answer = JSON.parse(await r1.text()) as { svc: { credits_used: number; settlement?: string; balance_remaining: number | null } };
  // The answer is the client's (it was produced and is being charged); its charge is confirmed later.
  expect(r1.status).toBe(200);
  expect(answer.svc.settlement).toBe('pending');
  expect(answer.svc.balance_remaining).toBeNull();
  await new Promise((r) => setTimeout(r, 1000));
  const r2 = await fetch(`${gw.url}/chat/completions`, { method: 'POST', headers, body });
  const t2 = await r2.text();
  const usage = (await gw.store.ledger.balance(seeded.accountId, 'live')).purchased;
  const charged = JSON.parse(t2).svc?.credits_used;
  expect(1_000_000 - usage).toBe(charged);
}, 30_000);
