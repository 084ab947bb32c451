/** The output bound on an adapter's answers: how far past `max_tokens` an upstream may go, and what ends it. */
import { describe, expect, it } from 'vitest';
import { UpstreamError, type EventBatches, type ProviderAdapter, type StreamEvent, type UpstreamCall } from '../../src/providers/contract.js';
import { boundOutput, boundedEvents, outputAllowance } from '../../src/providers/upstream-output-bound.js';

const text = (content: string): StreamEvent => ({ type: 'delta', delta: { content }, finishReason: null });

/** `count` events of `piece`, one per batch, recording whether the consumer released the source. */
function source(piece: string, count: number): { events: AsyncGenerator<StreamEvent[]>; released: () => boolean } {
  let released = false;
  async function* gen(): AsyncGenerator<StreamEvent[]> {
    try {
      for (let i = 0; i < count; i++) yield [text(piece)];
      yield [{ type: 'delta', delta: {}, finishReason: 'stop' }];
    } finally {
      released = true;
    }
  }
  return { events: gen(), released: () => released };
}

async function drain(batches: EventBatches): Promise<string> {
  let out = '';
  for await (const batch of batches) for (const ev of batch) if (ev.type === 'delta') out += ev.delta.content ?? '';
  return out;
}

describe('boundedEvents', () => {
  it('passes an answer within the allowance whole', async () => {
    // 30-token bound: 4 x 30 + 1,024 = 1,144 estimated tokens, 3,432 ASCII bytes.
    expect(outputAllowance(30)).toBe(1144);
    const src = source('abc', 1144);
    expect(await drain(boundedEvents(src.events, 30))).toBe('abc'.repeat(1144));
  });

  it('ends one that goes past it with a retryable UpstreamError and releases the upstream', async () => {
    const src = source('abc', 1145);
    const err: unknown = await drain(boundedEvents(src.events, 30)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamError);
    expect((err as UpstreamError).retryable).toBe(true);
    expect((err as UpstreamError).message).toContain('max_tokens 30');
    expect(src.released()).toBe(true);
  });

  it('counts tool-call arguments and refusals, not only text', async () => {
    async function* calls(): AsyncGenerator<StreamEvent[]> {
      yield [{ type: 'delta', delta: { refusal: 'x'.repeat(3000) }, finishReason: null }];
      yield [{ type: 'delta', delta: { tool_calls: [{ index: 0, function: { arguments: 'y'.repeat(600) } }] }, finishReason: null }];
    }
    await expect(drain(boundedEvents(calls(), 30))).rejects.toBeInstanceOf(UpstreamError);
  });

  it('delivers the events of a batch before the one that crosses the allowance, then ends with the error', async () => {
    let released = false;
    async function* oneRead(): AsyncGenerator<StreamEvent[]> {
      try {
        // 3,420 bytes (1,140 estimated tokens) fit the 1,144 allowance; the next event does not.
        yield [text('a'.repeat(1710)), text('b'.repeat(1710)), text('c'.repeat(30)), text('d')];
        yield [text('never read')];
      } finally {
        released = true;
      }
    }
    const it = boundedEvents(oneRead(), 30);
    const first = await it.next();
    expect(first.done).toBe(false);
    expect((first.value as StreamEvent[]).map((e) => (e.type === 'delta' ? e.delta.content?.[0] : ''))).toEqual(['a', 'b']);
    await expect(it.next()).rejects.toBeInstanceOf(UpstreamError);
    expect(released).toBe(true);
  });
});

describe('boundOutput', () => {
  const call = { request: { max_tokens: 10 }, model: 'm', signal: new AbortController().signal } as unknown as UpstreamCall;
  const adapter = (content: string): ProviderAdapter => ({
    name: 'p',
    protocol: 'openai-compatible',
    paid: false,
    complete: async () => ({ message: { role: 'assistant', content }, finishReason: 'stop', usage: null, model: null }),
    stream: async () => source(content, 1).events,
  });

  it('checks a one-piece answer whole', async () => {
    expect((await boundOutput(adapter('a'.repeat(3000))).complete(call)).message.content).toHaveLength(3000);
    await expect(boundOutput(adapter('a'.repeat(4000))).complete(call)).rejects.toBeInstanceOf(UpstreamError);
  });

  it('bounds a stream and keeps the adapter identity fields', async () => {
    const bounded = boundOutput(adapter('a'.repeat(4000)));
    expect([bounded.name, bounded.protocol, bounded.paid]).toEqual(['p', 'openai-compatible', false]);
    await expect(drain(await bounded.stream(call))).rejects.toBeInstanceOf(UpstreamError);
  });
});
