/** The streaming answer checked at the byte level, as a non-SDK client would read it. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chat, sseData, startTestGateway, type Seeded, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
let seeded: Seeded;

beforeAll(async () => {
  gw = await startTestGateway();
  seeded = await gw.seed({ purchased: 50_000 });
});
afterAll(() => gw.close());

interface Chunk {
  id: string;
  object: string;
  created: number;
  model: string;
  choices: { index: number; delta: { role?: string; content?: string }; finish_reason: string | null }[];
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null;
  svc?: { credits_used: number; tokens_metered: { prompt: number; completion: number } };
}

describe('SSE framing', () => {
  it('with include_usage: role, content pieces, finish, then the usage chunk carrying svc, last before [DONE]', async () => {
    const res = await chat(gw, seeded.secret, {
      model: 'svc-fast',
      messages: [{ role: 'user', content: 'Classify the sentiment: I love it.' }],
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 40,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    const data = sseData(await res.text());
    expect(data.at(-1)).toBe('[DONE]');
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d) as Chunk);
    const [first] = chunks;
    expect(first?.choices[0]?.delta).toEqual({ role: 'assistant', content: '' });
    for (const c of chunks) {
      expect(c.id).toBe(first?.id);
      expect(c.created).toBe(first?.created);
      expect(c.object).toBe('chat.completion.chunk');
      expect(c.model).toBe('svc-fast');
    }
    const finishAt = chunks.findIndex((c) => c.choices[0]?.finish_reason);
    expect(finishAt).toBeGreaterThan(1);
    const content = chunks.slice(1, finishAt).map((c) => c.choices[0]?.delta.content ?? '');
    expect(content.every((piece) => piece.length > 0)).toBe(true);
    // OpenAI's shape: the usage chunk (no choices) is the last one, so code that reads `usage` from the
    // last chunk finds it; it carries `svc` too, and no other chunk does.
    expect(chunks).toHaveLength(finishAt + 2);
    const usageChunk = chunks[finishAt + 1];
    expect(usageChunk?.choices).toEqual([]);
    expect(usageChunk?.usage?.total_tokens).toBe((usageChunk?.usage?.prompt_tokens ?? 0) + (usageChunk?.usage?.completion_tokens ?? 0));
    expect(usageChunk?.svc?.tokens_metered.completion).toBe(usageChunk?.usage?.completion_tokens);
    expect(chunks.filter((c) => c.svc !== undefined)).toHaveLength(1);
    // Every chunk but the usage chunk carries usage: null when include_usage is on, as OpenAI does.
    expect(chunks.slice(0, finishAt + 1).every((c) => c.usage === null)).toBe(true);
  });

  it('without include_usage: the chunk with the finish reason is the last and carries svc; every chunk has a choice', async () => {
    const res = await chat(gw, seeded.secret, {
      model: 'svc-fast',
      messages: [{ role: 'user', content: 'Say hi' }],
      stream: true,
      max_tokens: 10,
    });
    const chunks = sseData(await res.text()).slice(0, -1).map((d) => JSON.parse(d) as Chunk);
    expect(chunks.every((c) => !('usage' in c))).toBe(true);
    // Code that reads chunk.choices[0] without a guard never meets an empty list.
    expect(chunks.every((c) => c.choices.length === 1)).toBe(true);
    const last = chunks.at(-1);
    expect(last?.choices[0]?.finish_reason).toBe('length');
    expect(last?.svc?.credits_used).toBeGreaterThan(0);
    expect(chunks.filter((c) => c.svc !== undefined)).toHaveLength(1);
  });

  it('flushes chunks as they are produced, not at the end', async () => {
    const paced = await startTestGateway({ config: (await import('../helpers/gateway.js')).pacedSandboxConfig(0, 40) });
    try {
      const s = await paced.seed({ purchased: 10_000 });
      const res = await chat(paced, s.secret, {
        model: 'svc-fast',
        messages: [{ role: 'user', content: 'Tell me a story' }],
        stream: true,
        max_tokens: 20,
      });
      const reader = res.body!.getReader();
      const arrivals: number[] = [];
      for (;;) {
        const { done } = await reader.read();
        if (done) break;
        arrivals.push(performance.now());
      }
      // 20 tokens at 40/s take ~500 ms; buffered output would arrive in one or two reads at the end.
      expect(arrivals.length).toBeGreaterThan(10);
      expect((arrivals.at(-1) ?? 0) - (arrivals[0] ?? 0)).toBeGreaterThan(200);
    } finally {
      await paced.close();
    }
  });
});
