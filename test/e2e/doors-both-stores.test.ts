/**
 * Every door is metered by the same rules on both stores: a chat completion, a legacy completion and an
 * Anthropic message, each streamed and not, through the real clients, on the embedded SQLite file and on
 * PostgreSQL. Each answer's `svc.credits_used` is what the ledger charged: GET /v1/usage grows by their sum,
 * the balance falls by it, and no hold is left pending.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestSchema, dropTestSchema, POSTGRES_URL } from '../store/postgres-harness.js';
import { startTestGateway, type Seeded, type TestGateway } from '../helpers/gateway.js';

interface Svc {
  requested_model: string;
  credits_used: number;
}

const svcOf = (value: unknown): Svc => (value as { svc: Svc }).svc;

describe.each(['sqlite', 'postgres'] as const)('the doors on %s', (store) => {
  let gw: TestGateway;
  let account: Seeded;
  let schema: string | null = null;

  beforeAll(async () => {
    if (store === 'postgres') schema = await createTestSchema();
    gw = await startTestGateway(schema === null ? {} : { databaseUrl: `${POSTGRES_URL}?schema=${schema}` });
    account = await gw.seed({ purchased: 1_000_000 });
  });
  afterAll(async () => {
    await gw?.close();
    if (schema !== null) await dropTestSchema(schema);
  });

  const usage = async (): Promise<number> => {
    const today = new Date().toISOString().slice(0, 10);
    const res = await fetch(`${gw.url}/usage?start_date=${today}&end_date=${today}`, { headers: { authorization: `Bearer ${account.secret}` } });
    return ((await res.json()) as { total_credits_spent: number }).total_credits_spent;
  };

  it('charges each door its svc.credits_used, reports it in /v1/usage, leaves no hold', async () => {
    const openai = new OpenAI({ baseURL: gw.url, apiKey: account.secret, maxRetries: 0 });
    const anthropic = new Anthropic({ baseURL: new URL(gw.url).origin, apiKey: account.secret, maxRetries: 0 });
    const before = await usage();
    const balanceBefore = await gw.store.ledger.balance(account.accountId, 'live');
    const charged: number[] = [];

    const chat = await openai.chat.completions.create({ model: 'svc-fast', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 20 });
    charged.push(svcOf(chat).credits_used);
    let streamedChat: Svc | null = null;
    for await (const chunk of await openai.chat.completions.create({ model: 'svc-code', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 20, stream: true })) {
      if ('svc' in chunk) streamedChat = svcOf(chunk);
    }
    charged.push(streamedChat?.credits_used ?? Number.NaN);

    const legacy = await openai.completions.create({ model: 'svc-fast', prompt: 'Hi', max_tokens: 20 });
    charged.push(svcOf(legacy).credits_used);
    let streamedLegacy: Svc | null = null;
    for await (const event of await openai.completions.create({ model: 'svc-smart', prompt: 'Hi', max_tokens: 20, stream: true })) {
      if ('svc' in event) streamedLegacy = svcOf(event);
    }
    charged.push(streamedLegacy?.credits_used ?? Number.NaN);

    const message = await anthropic.messages.create({ model: 'svc-fast', max_tokens: 20, messages: [{ role: 'user', content: 'Hi' }] });
    charged.push(svcOf(message).credits_used);
    let streamedMessage: Svc | null = null;
    const stream = anthropic.messages.stream({ model: 'svc-code', max_tokens: 20, messages: [{ role: 'user', content: 'Hi' }] });
    for await (const event of stream) if (event.type === 'message_delta') streamedMessage = svcOf(event);
    charged.push(streamedMessage?.credits_used ?? Number.NaN);

    expect(charged.every((c) => Number.isInteger(c) && c > 0), JSON.stringify(charged)).toBe(true);
    const total = charged.reduce((a, b) => a + b, 0);
    expect(await usage()).toBe(before + total);
    const balanceAfter = await gw.store.ledger.balance(account.accountId, 'live');
    expect(balanceBefore.purchased - balanceAfter.purchased).toBe(total);
    expect(balanceAfter.reserved).toBe(0);
    expect(await gw.store.ledger.countPendingHolds(account.accountId)).toBe(0);
  });
});
