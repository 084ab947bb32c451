/**
 * Regression (found by an adversarial review): Gemini sends running usage totals (thinking included) on every chunk, but the adapter
 * reports usage only after the body ended. A client that hangs up before the last chunk is charged the
 * visible text alone; the thinking tokens the gateway already knew about are not charged.
 */
import { expect, it } from 'vitest';
import { answerEvents } from '../../src/providers/gemini/stream-events.js';
import type { StreamEvent } from '../../src/providers/contract.js';

const chunk = (text: string, finish: string | null) => ({
  responseId: 'r1',
  candidates: [{ content: { role: 'model', parts: [{ text }] }, ...(finish ? { finishReason: finish } : {}) }],
  usageMetadata: { promptTokenCount: 40, candidatesTokenCount: 3, thoughtsTokenCount: 5000 },
});

it('the running usage (5000 thinking tokens) is known to the gateway before the last chunk', async () => {
  const chunks = [chunk('The keeper', null), chunk(' counted', null), chunk(' ships.', 'STOP')];
  const seen: StreamEvent[] = [];
  const it = answerEvents(chunks.map((c) => [c]), new AbortController().signal)[Symbol.asyncIterator]();
  // The client reads two chunks and hangs up: the gateway stops reading here.
  for (let i = 0; i < 2; i++) seen.push(...((await it.next()).value as StreamEvent[]));
  await it.return?.();
  expect(seen.some((e) => e.type === 'usage')).toBe(true);
});
