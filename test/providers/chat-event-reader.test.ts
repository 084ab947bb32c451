/**
 * The OpenAI-compatible adapter's event reader (src/providers/openai-compatible/event-stream.ts) reads its
 * body itself. What it owes the layers above and the upstream connection below: when it cancels the body,
 * when it closes the body's iteration (which, on Node, destroys an upstream connection whose answer has not
 * ended), and which error each way of ending gives.
 */
import { describe, expect, it } from 'vitest';
import { UpstreamError, type StreamEvent } from '../../src/providers/contract.js';
import { readChatStream } from '../../src/providers/openai-compatible/event-stream.js';
import type { UpstreamBody } from '../../src/providers/upstream-http.js';

const encoder = new TextEncoder();
const chunk = (content: string, finish: string | null = null): string =>
  `data: ${JSON.stringify({ model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: finish }] })}\n\n`;

/** A body whose reads are the given texts (a null read waits until the body is cancelled), and what was done to it. */
function scriptedBody(reads: (string | null)[]) {
  const log: string[] = [];
  let cancelled: ((reason: unknown) => void) | null = null;
  let cancelReason: unknown = undefined;
  let isCancelled = false;
  const body: UpstreamBody = {
    [Symbol.asyncIterator]() {
      let i = 0;
      return {
        next(): Promise<IteratorResult<Uint8Array>> {
          log.push('read');
          if (isCancelled) return Promise.reject(new Error('cancelled'));
          if (i >= reads.length) return Promise.resolve({ done: true, value: undefined });
          const text = reads[i++];
          if (text === null) {
            return new Promise((_, reject) => {
              cancelled = (reason) => reject(reason instanceof Error ? reason : new Error('cancelled'));
            });
          }
          return Promise.resolve({ done: false, value: encoder.encode(text) });
        },
        return(): Promise<IteratorResult<Uint8Array>> {
          log.push('return');
          return Promise.resolve({ done: true, value: undefined });
        },
      };
    },
    cancel: (reason) => {
      log.push('cancel');
      isCancelled = true;
      cancelReason = reason;
      cancelled?.(reason);
      return Promise.resolve();
    },
  };
  return { body, log, reason: () => cancelReason };
}

const contents = (batches: (readonly StreamEvent[])[]): string[] =>
  batches.flat().flatMap((e) => (e.type === 'delta' && e.delta.content ? [e.delta.content] : []));

describe('the chat event reader', () => {
  it('hands over one batch per read, and closes the body only at the read after [DONE]', async () => {
    const { body, log } = scriptedBody([chunk('Once') + chunk(' upon'), chunk(' a time', 'stop') + 'data: [DONE]\n\n', '']);
    const reader = readChatStream(body, new AbortController().signal);
    const first = await reader.next();
    const second = await reader.next();
    expect(first.done === false && first.value.length).toBe(2);
    expect(contents([first.value ?? [], second.value ?? []])).toEqual(['Once', ' upon', ' a time']);
    // [DONE] arrived with the last batch: the body's end may still be on its way, so nothing is closed yet.
    expect(log).toEqual(['read', 'read']);
    expect(await reader.next()).toEqual({ done: true, value: undefined });
    expect(log).toEqual(['read', 'read', 'return']);
    expect(await reader.next()).toEqual({ done: true, value: undefined });
    expect(log).toEqual(['read', 'read', 'return']);
  });

  it('releases a body that can be released after [DONE], rather than closing it', async () => {
    const { body, log } = scriptedBody([chunk('Done.', 'stop') + 'data: [DONE]\n\n', '']);
    const released: UpstreamBody = { ...body, release: () => log.push('release') };
    const reader = readChatStream(released, new AbortController().signal);
    await reader.next();
    expect(await reader.next()).toEqual({ done: true, value: undefined });
    expect(log).toEqual(['read', 'release']);

    // Given up on right after [DONE] (instead of reading on): the answer is whole all the same.
    const other = scriptedBody([chunk('Done.', 'stop') + 'data: [DONE]\n\n', '']);
    const reader2 = readChatStream({ ...other.body, release: () => other.log.push('release') }, new AbortController().signal);
    await reader2.next();
    await reader2.return?.();
    expect(other.log).toEqual(['read', 'release']);

    // Before [DONE], giving up closes the body, release or not.
    const early = scriptedBody([chunk('Half'), chunk(' more', 'stop')]);
    const reader3 = readChatStream({ ...early.body, release: () => early.log.push('release') }, new AbortController().signal);
    await reader3.next();
    await reader3.return?.();
    expect(early.log).toEqual(['read', 'return']);
  });

  it('reads on through reads that complete no event', async () => {
    const whole = chunk('Hello', 'stop');
    const { body } = scriptedBody([whole.slice(0, 10), whole.slice(10, 20), whole.slice(20), 'data: [DONE]\n\n']);
    const batches: (readonly StreamEvent[])[] = [];
    for await (const batch of readChatStream(body, new AbortController().signal)) batches.push(batch);
    expect(contents(batches)).toEqual(['Hello']);
    expect(batches).toHaveLength(1);
  });

  it('accepts a body that ends after a finish_reason without [DONE], and calls one that ends before it a cut', async () => {
    const whole = scriptedBody([chunk('Done.', 'stop')]);
    const batches: (readonly StreamEvent[])[] = [];
    for await (const batch of readChatStream(whole.body, new AbortController().signal)) batches.push(batch);
    expect(contents(batches)).toEqual(['Done.']);
    // The body ended by itself: there is no iteration left to close.
    expect(whole.log).not.toContain('return');

    const cut = scriptedBody([chunk('Half an')]);
    const reader = readChatStream(cut.body, new AbortController().signal);
    const first = await reader.next();
    expect(contents([first.value ?? []])).toEqual(['Half an']);
    await expect(reader.next()).rejects.toMatchObject({ kind: 'protocol', message: expect.stringContaining('ended early') });
  });

  it('cancels a body it never read when given up on', async () => {
    const { body, log } = scriptedBody([chunk('never read', 'stop')]);
    const reader = readChatStream(body, new AbortController().signal);
    expect(await reader.return?.()).toEqual({ done: true, value: undefined });
    expect(log).toEqual(['cancel']);
    expect(await reader.next()).toEqual({ done: true, value: undefined });
  });

  it('closes the body when given up on after a read', async () => {
    const { body, log } = scriptedBody([chunk('Once'), chunk(' more', 'stop')]);
    const reader = readChatStream(body, new AbortController().signal);
    await reader.next();
    await reader.return?.();
    expect(log).toEqual(['read', 'return']);
  });

  it('cancels the body when the signal fires during a read, and ends with the abort', async () => {
    const { body, log, reason } = scriptedBody([chunk('Once'), null]);
    const controller = new AbortController();
    const reader = readChatStream(body, controller.signal);
    await reader.next();
    const waiting = reader.next();
    const why = new UpstreamError('timeout', 'no chunk for 30 s');
    controller.abort(why);
    await expect(waiting).rejects.toBe(why);
    expect(log).toEqual(['read', 'read', 'cancel']);
    expect(reason()).toBe(why);
    expect(await reader.next()).toEqual({ done: true, value: undefined });
  });

  it('with the signal fired between two reads, cancels the body and reads it no more', async () => {
    const { body, log } = scriptedBody([chunk('Once'), chunk(' more', 'stop')]);
    const controller = new AbortController();
    const reader = readChatStream(body, controller.signal);
    await reader.next();
    controller.abort(new UpstreamError('aborted', 'the request ended'));
    await expect(reader.next()).rejects.toMatchObject({ kind: 'aborted' });
    expect(log).toEqual(['read', 'cancel', 'return']);
  });

  it('with the signal fired before the first read, cancels the body and reads nothing', async () => {
    const { body, log } = scriptedBody([chunk('x', 'stop')]);
    const controller = new AbortController();
    controller.abort(new UpstreamError('aborted', 'the request ended'));
    await expect(readChatStream(body, controller.signal).next()).rejects.toMatchObject({ kind: 'aborted' });
    expect(log).toEqual(['cancel']);
  });

  it('answers a read pending when it is given up on as the end, not as an error', async () => {
    const { body } = scriptedBody([chunk('Once'), null]);
    const reader = readChatStream(body, new AbortController().signal);
    await reader.next();
    const waiting = reader.next();
    await reader.return?.();
    // The scripted read rejects once the body is cancelled; here nothing cancelled it, so cancel it now.
    await body.cancel(new Error('gone'));
    expect(await waiting).toEqual({ done: true, value: undefined });
  });

  it('turns a lost connection into a connect error, and malformed SSE or JSON into a protocol error, closing the body', async () => {
    const lost: UpstreamBody = {
      [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(new Error('socket hang up')) }),
      cancel: () => Promise.resolve(),
    };
    await expect(readChatStream(lost, new AbortController().signal).next()).rejects.toMatchObject({ kind: 'connect' });

    const malformed = scriptedBody(['data: {"choices": [\n\n', chunk('never')]);
    await expect(readChatStream(malformed.body, new AbortController().signal).next()).rejects.toMatchObject({
      kind: 'protocol',
      message: expect.stringContaining('malformed stream chunk'),
    });
    expect(malformed.log).toEqual(['read', 'return']);
  });
});
