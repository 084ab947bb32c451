/** Builders and collectors shared by the provider tests. */
import { expect } from 'vitest';
import { UpstreamError, type EventBatches, type StreamEvent, type UpstreamCall, type UpstreamTokens } from '../../../src/providers/contract.js';
import type { ChatRequest, ChunkDelta, FinishReason } from '../../../src/openai/chat-types.js';

export function chatRequest(overrides: Partial<ChatRequest> = {}): ChatRequest & { max_tokens: number } {
  return {
    model: 'svc-fast',
    messages: [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Say hello.' },
    ],
    temperature: 1,
    top_p: 1,
    stream: true,
    include_usage: false,
    ...overrides,
    max_tokens: overrides.max_tokens ?? 256,
  };
}

export function upstreamCall(
  model: string,
  overrides: Partial<ChatRequest> = {},
  signal: AbortSignal = new AbortController().signal,
): UpstreamCall {
  return { request: chatRequest(overrides), model, signal };
}

/** Every event of a stream, its batches joined in order. */
export async function collect(batches: EventBatches): Promise<StreamEvent[]> {
  const out: StreamEvent[] = [];
  for await (const batch of batches) {
    expect(batch.length).toBeGreaterThan(0);
    out.push(...batch);
  }
  return out;
}

/** Collects a stream's events until it fails; returns what arrived and the error (it must fail). */
export async function collectUntilFailure(batches: EventBatches): Promise<{ seen: StreamEvent[]; error: unknown }> {
  const seen: StreamEvent[] = [];
  try {
    for await (const batch of batches) seen.push(...batch);
  } catch (error) {
    return { seen, error };
  }
  throw new Error('expected the stream to fail');
}

/** A stream's events one by one, for tests that stop part-way (leaving the loop releases the stream). */
export async function* eachEvent(batches: EventBatches): AsyncGenerator<StreamEvent, void, undefined> {
  for await (const batch of batches) yield* batch;
}

/** Awaits a promise that must reject with an UpstreamError, and returns that error. */
export async function upstreamFailure(promise: Promise<unknown>): Promise<UpstreamError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(UpstreamError);
    if (err instanceof UpstreamError) return err;
  }
  throw new Error('expected an UpstreamError, but the call succeeded');
}

export function deltas(events: StreamEvent[]): { delta: ChunkDelta; finishReason: FinishReason | null }[] {
  return events.flatMap((e) => (e.type === 'delta' ? [{ delta: e.delta, finishReason: e.finishReason }] : []));
}

export function text(events: StreamEvent[]): string {
  return events.map((e) => (e.type === 'delta' ? (e.delta.content ?? '') : '')).join('');
}

/** The reasoning text relayed apart from the answer (`reasoning_content` deltas), joined. */
export function reasoning(events: StreamEvent[]): string {
  return events.map((e) => (e.type === 'delta' ? (e.delta.reasoning_content ?? '') : '')).join('');
}

export function finishReasons(events: StreamEvent[]): string[] {
  return events.flatMap((e) => (e.type === 'delta' && e.finishReason !== null ? [e.finishReason] : []));
}

export function usages(events: StreamEvent[]): UpstreamTokens[] {
  return events.flatMap((e) => (e.type === 'usage' ? [e.usage] : []));
}
