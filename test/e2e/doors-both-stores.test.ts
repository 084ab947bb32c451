/**
 * Every door is metered by the same rules on both stores: a chat completion, a legacy completion, an
 * Anthropic message and a Responses API response, each streamed and not, through the real clients, on the
 * embedded SQLite file and on PostgreSQL. Each answer's `svc.credits_used` is what the ledger charged:
 * GET /v1/usage grows by their sum, the balance falls by it, and no hold is left pending. The Responses door
 * also keeps its answers in the store: found by GET and `previous_response_id`, by their account only,
 * until deleted.
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
    // From yesterday: a run across midnight UTC records its first requests on the day before.
    const since = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const res = await fetch(`${gw.url}/usage?start_date=${since}&end_date=${today}`, { headers: { authorization: `Bearer ${account.secret}` } });
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

    const response = await openai.responses.create({ model: 'svc-fast', input: 'Hi', max_output_tokens: 20 });
    charged.push(svcOf(response).credits_used);
    const streamedResponse = await openai.responses.stream({ model: 'svc-code', input: 'Hi', max_output_tokens: 20 }).finalResponse();
    charged.push(svcOf(streamedResponse).credits_used);

    expect(charged.every((c) => Number.isInteger(c) && c > 0), JSON.stringify(charged)).toBe(true);
    const total = charged.reduce((a, b) => a + b, 0);
    expect(await usage()).toBe(before + total);
    const balanceAfter = await gw.store.ledger.balance(account.accountId, 'live');
    expect(balanceBefore.purchased - balanceAfter.purchased).toBe(total);
    expect(balanceAfter.reserved).toBe(0);
    expect(await gw.store.ledger.countPendingHolds(account.accountId)).toBe(0);
  });

  it('keeps Responses answers: GET and previous_response_id find them, another account does not, DELETE removes them', async () => {
    const openai = new OpenAI({ baseURL: gw.url, apiKey: account.secret, maxRetries: 0 });
    const first = await openai.responses.create({ model: 'svc-fast', input: 'Hi', max_output_tokens: 20 });
    const streamed = await openai.responses.stream({ model: 'svc-fast', input: 'Hi again', max_output_tokens: 20 }).finalResponse();
    expect([first, streamed].map((r) => (r as { store?: unknown }).store)).toEqual([true, true]);
    const get = (id: string, secret = account.secret): Promise<Response> => fetch(`${gw.url}/responses/${id}`, { headers: { authorization: `Bearer ${secret}` } });
    for (const r of [first, streamed]) {
      const got = await get(r.id);
      expect(got.status).toBe(200);
      expect(await got.json()).toMatchObject({ id: r.id, object: 'response', output: r.output.map((i) => ({ id: i.id, type: i.type })) });
    }
    const next = await openai.responses.create({ model: 'svc-fast', input: 'And then?', previous_response_id: streamed.id, max_output_tokens: 20 });
    expect(next.previous_response_id).toBe(streamed.id);

    const other = await gw.seed({ purchased: 1_000 });
    expect((await get(first.id, other.secret)).status).toBe(404);
    const refused = await new OpenAI({ baseURL: gw.url, apiKey: other.secret, maxRetries: 0 }).responses
      .create({ model: 'svc-fast', input: 'Hi', previous_response_id: first.id })
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ status: 400, code: 'previous_response_not_found', param: 'previous_response_id' });

    await openai.responses.delete(first.id);
    expect((await get(first.id)).status).toBe(404);
    expect((await get(streamed.id)).status).toBe(200);
  });
});