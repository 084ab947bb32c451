/**
 * Events come in batches, one per network read (src/providers/contract.ts, EventBatches). When one read
 * holds good chunks and then one that fails the answer, the events of the chunks before the fault must still
 * be delivered, then the failure, as they were one chunk at a time: dropping them lost a finished answer
 * (failover would retry a whole one) and the running usage a provider had already billed. Regression for
 * Gemini (found by an adversarial review of the batching); the same case for the two SSE readers.
 */
import { describe, expect, it } from 'vitest';
import { UpstreamError, type StreamEvent } from '../../src/providers/contract.js';
import { readMessageStream } from '../../src/providers/anthropic/stream-events.js';
import { answerEvents } from '../../src/providers/gemini/stream-events.js';
import { readChatStream } from '../../src/providers/openai-compatible/event-stream.js';
import type { UpstreamBody } from '../../src/providers/upstream-http.js';
import { collectUntilFailure } from './helpers/calls.js';

/** A body that arrives in one network read. */
function oneRead(text: string): UpstreamBody {
  return {
    async *[Symbol.asyncIterator]() {
      yield new TextEncoder().encode(text);
    },
    cancel: async () => undefined,
  };
}

const contents = (events: StreamEvent[]): string[] => events.flatMap((e) => (e.type === 'delta' && e.delta.content ? [e.delta.content] : []));
const signal = (): AbortSignal => new AbortController().signal;

describe('Gemini: a failing chunk in the middle of a read', () => {
  const chunk = (text: string, finish: string | null) => ({
    responseId: 'r1',
    candidates: [{ content: { role: 'model', parts: [{ text }] }, ...(finish ? { finishReason: finish } : {}) }],
    usageMetadata: { promptTokenCount: 40, candidatesTokenCount: 3, thoughtsTokenCount: 500 },
  });
  const overloaded = { error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' } };

  it('delivers the text and running usage before it, then fails', async () => {
    const { seen, error } = await collectUntilFailure(answerEvents([[chunk('Once', null), overloaded, chunk(' upon', null)]], signal()));
    expect(contents(seen)).toEqual(['Once']);
    expect(seen.some((e) => e.type === 'usage' && e.usage.completionTokens > 0)).toBe(true);
    expect(error).toBeInstanceOf(UpstreamError);
  });

  it('delivers a finished answer before the fault that follows it in the same read', async () => {
    const { seen, error } = await collectUntilFailure(answerEvents([[chunk('The end.', 'STOP'), overloaded]], signal()));
    expect(seen.some((e) => e.type === 'delta' && e.finishReason === 'stop')).toBe(true);
    expect(error).toBeInstanceOf(UpstreamError);
  });
});

describe('OpenAI-compatible: an error chunk in the middle of a read', () => {
  const delta = (content: string) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;

  it('delivers the deltas before it, then fails', async () => {
    const body = oneRead(delta('Once') + delta(' upon') + `data: ${JSON.stringify({ error: { message: 'overloaded', type: 'server_error' } })}\n\n` + delta(' never'));
    const { seen, error } = await collectUntilFailure(readChatStream(body, signal()));
    expect(contents(seen)).toEqual(['Once', ' upon']);
    expect(error).toBeInstanceOf(UpstreamError);
  });

  it('delivers the deltas before a malformed chunk, then fails', async () => {
    const { seen, error } = await collectUntilFailure(readChatStream(oneRead(delta('Once') + 'data: {"choices":\n\n'), signal()));
    expect(contents(seen)).toEqual(['Once']);
    expect(error).toMatchObject({ kind: 'protocol' });
  });
});

describe('Anthropic: an error event in the middle of a read', () => {
  const event = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

  it('delivers the text before it, then fails', async () => {
    const body = oneRead(
      event('message_start', { message: { id: 'msg_1', model: 'claude', usage: { input_tokens: 10, output_tokens: 1 } } }) +
        event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }) +
        event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Once' } }) +
        event('error', { error: { type: 'overloaded_error', message: 'Overloaded' } }),
    );
    const { seen, error } = await collectUntilFailure(readMessageStream(body, signal(), null));
    expect(contents(seen)).toEqual(['Once']);
    expect(error).toMatchObject({ kind: 'http', status: 529 });
  });
});
