/** The output bound on an adapter's answers: how far past `max_tokens` an upstream may go, and what ends it. */
import { describe, expect, it } from 'vitest';
import { UpstreamError, type EventBatches, type ProviderAdapter, type StreamEvent, type UpstreamCall } from '../../src/providers/contract.js';
import { boundOutput, OutputBound, outputAllowance } from '../../src/providers/upstream-output-bound.js';

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

/** The content of a batch's text deltas, joined. */
function textOf(batch: readonly StreamEvent[]): string {
  return batch.map((e) => (e.type === 'delta' ? (e.delta.content ?? '') : '')).join('');
}

describe('OutputBound', () => {
  it('passes an answer within the allowance whole, the same batches', () => {
    // 30-token bound: 4 x 30 + 1,024 = 1,144 estimated tokens, 3,432 ASCII bytes.
    expect(outputAllowance(30)).toBe(1144);
    const bound = new OutputBound(30);
    for (let i = 0; i < 1144; i++) {
      const batch = [text('abc')];
      expect(bound.check(batch)).toBe(batch);
    }
    expect(bound.overrun).toBeNull();
  });

  it('sets a retryable UpstreamError once an answer goes past it', () => {
    const bound = new OutputBound(30);
    for (let i = 0; i < 1144; i++) bound.check([text('abc')]);
    expect(bound.check([text('abc')])).toEqual([]);
    expect(bound.overrun).toBeInstanceOf(UpstreamError);
    expect(bound.overrun?.retryable).toBe(true);
    expect(bound.overrun?.message).toContain('max_tokens 30');
  });

  it('counts tool-call arguments and refusals, not only text', () => {
    const bound = new OutputBound(30);
    bound.check([{ type: 'delta', delta: { refusal: 'x'.repeat(3000) }, finishReason: null }]);
    expect(bound.overrun).toBeNull();
    bound.check([{ type: 'delta', delta: { tool_calls: [{ index: 0, function: { arguments: 'y'.repeat(600) } }] }, finishReason: null }]);
    expect(bound.overrun).toBeInstanceOf(UpstreamError);
  });

  it('keeps the events of a batch before the one that crosses the allowance', () => {
    const bound = new OutputBound(30);
    // 3,420 bytes (1,140 estimated tokens) fit the 1,144 allowance; the next event does not.
    const kept = bound.check([text('a'.repeat(1710)), text('b'.repeat(1710)), text('c'.repeat(30)), text('d')]);
    expect(kept.map((e) => textOf([e])[0])).toEqual(['a', 'b']);
    expect(bound.overrun).toBeInstanceOf(UpstreamError);
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

  it('leaves a stream to its reader (failover bounds it) and keeps the adapter identity fields', async () => {
    const bounded = boundOutput(adapter('a'.repeat(4000)));
    expect([bounded.name, bounded.protocol, bounded.paid]).toEqual(['p', 'openai-compatible', false]);
    expect(await drain(await bounded.stream(call))).toBe('a'.repeat(4000));
  });
});
