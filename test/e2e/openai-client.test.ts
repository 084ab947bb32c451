/** The official `openai` npm client, unmodified but for base URL and key, against the real server. */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type Seeded, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
let seeded: Seeded;
let client: OpenAI;

beforeAll(async () => {
  gw = await startTestGateway();
  seeded = await gw.seed({ purchased: 100_000 });
  client = new OpenAI({ baseURL: gw.url, apiKey: seeded.secret, maxRetries: 0 });
});
afterAll(() => gw.close());

describe('openai client', () => {
  it('with an Idempotency-Key header, a retried request gets the first answer and is charged once', async () => {
    const before = (await gw.store.ledger.balance(seeded.accountId, 'live')).purchased;
    const key = `retry-${crypto.randomUUID()}`;
    const params = { model: 'svc-fast', messages: [{ role: 'user' as const, content: 'Name a lighthouse.' }], max_tokens: 30 };
    const first = await client.chat.completions.create(params, { headers: { 'Idempotency-Key': key } });
    const again = await client.chat.completions.create(params, { headers: { 'Idempotency-Key': key } });
    expect(again).toEqual(first);
    const svc = (first as unknown as { svc: { credits_used: number } }).svc;
    expect((await gw.store.ledger.balance(seeded.accountId, 'live')).purchased).toBe(before - svc.credits_used);

    const stream = async (): Promise<string[]> => {
      const pieces: string[] = [];
      const s = await client.chat.completions.create({ ...params, stream: true }, { headers: { 'Idempotency-Key': `${key}-s` } });
      for await (const chunk of s) pieces.push(JSON.stringify(chunk));
      return pieces;
    };
    expect(await stream()).toEqual(await stream());

    const reused = client.chat.completions.create({ ...params, max_tokens: 31 }, { headers: { 'Idempotency-Key': key } });
    await expect(reused).rejects.toMatchObject({ status: 409, code: 'idempotency_key_reused' });
  });

  it('lists the four aliases', async () => {
    const page = await client.models.list();
    expect(page.data.map((m) => m.id)).toEqual(['svc-auto', 'svc-fast', 'svc-code', 'svc-smart']);
    const one = await client.models.retrieve('svc-code');
    expect(one.id).toBe('svc-code');
  });

  it('completes without streaming and reports the svc metadata', async () => {
    const before = (await gw.store.ledger.balance(seeded.accountId, 'live')).purchased;
    const r = await client.chat.completions.create({
      model: 'svc-fast',
      messages: [{ role: 'user', content: 'Summarize: the cat sat on the mat.' }],
      max_tokens: 50,
    });
    expect(r.id).toMatch(/^chatcmpl-/);
    expect(r.object).toBe('chat.completion');
    expect(r.model).toBe('svc-fast');
    expect(r.choices[0]?.message.role).toBe('assistant');
    expect(r.choices[0]?.message.content?.length).toBeGreaterThan(0);
    expect(['stop', 'length']).toContain(r.choices[0]?.finish_reason);
    const usage = r.usage!;
    expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens);
    const svc = (r as unknown as { svc: Record<string, unknown> }).svc;
    expect(svc.requested_model).toBe('svc-fast');
    expect(svc.routed_model).toBe('sandbox/sandbox-fast');
    expect(svc.routed_provider).toBe('sandbox');
    const expected = Math.ceil((usage.prompt_tokens * 4 + usage.completion_tokens * 12) / 1000);
    expect(svc.credits_used).toBe(expected);
    expect(svc.balance_remaining).toBe(before - expected);
    expect((await gw.store.ledger.balance(seeded.accountId, 'live')).purchased).toBe(before - expected);
    expect(await gw.store.ledger.countPendingHolds(seeded.accountId)).toBe(0);
  });

  it('streams chunks with one id, then usage and svc, and charges once', async () => {
    const before = (await gw.store.ledger.balance(seeded.accountId, 'live')).purchased;
    const stream = await client.chat.completions.create({
      model: 'svc-smart',
      messages: [{ role: 'user', content: 'Prove that the square root of two is irrational.' }],
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 64,
    });
    const ids = new Set<string>();
    let text = '';
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined;
    let svc: Record<string, unknown> | undefined;
    for await (const chunk of stream) {
      ids.add(chunk.id);
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
      const extra = (chunk as unknown as { svc?: Record<string, unknown> }).svc;
      if (extra) svc = extra;
    }
    expect(ids.size).toBe(1);
    expect(text.length).toBeGreaterThan(0);
    expect(finish).not.toBeNull();
    expect(usage).toBeDefined();
    expect(svc?.routed_model).toBe('sandbox/sandbox-smart');
    const expected = Math.ceil((usage!.prompt_tokens * 25 + usage!.completion_tokens * 75) / 1000);
    expect(svc?.credits_used).toBe(expected);
    expect((await gw.store.ledger.balance(seeded.accountId, 'live')).purchased).toBe(before - expected);
    expect(await gw.store.ledger.countPendingHolds(seeded.accountId)).toBe(0);
  });

  it('svc-auto says which tier it chose', async () => {
    const r = await client.chat.completions.create({
      model: 'svc-auto',
      messages: [{ role: 'user', content: 'Write a Python function that reverses a linked list.' }],
      max_tokens: 20,
    });
    const svc = (r as unknown as { svc: { routing: { tier: string }; routed_model: string } }).svc;
    expect(svc.routing.tier).toBe('code');
    expect(svc.routed_model).toBe('sandbox/sandbox-code');
  });

  it('raises the SDK error classes with the gateway codes', async () => {
    await expect(
      client.chat.completions.create({ model: 'gpt-4', messages: [{ role: 'user', content: 'hi' }] }),
    ).rejects.toMatchObject({ status: 404, code: 'model_not_found', param: 'model' });
    await expect(
      client.chat.completions.create({ model: 'svc-fast', messages: [{ role: 'user', content: 'hi' }], temperature: 2.5 }),
    ).rejects.toMatchObject({ status: 400, param: 'temperature' });
    const bad = new OpenAI({ baseURL: gw.url, apiKey: 'sk-nope', maxRetries: 0 });
    await expect(bad.models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    const poor = await gw.seed({ purchased: 1 });
    const poorClient = new OpenAI({ baseURL: gw.url, apiKey: poor.secret, maxRetries: 0 });
    await expect(
      poorClient.chat.completions.create({ model: 'svc-smart', messages: [{ role: 'user', content: 'hi' }] }),
    ).rejects.toMatchObject({ status: 402, code: 'insufficient_credits' });
  });
});
