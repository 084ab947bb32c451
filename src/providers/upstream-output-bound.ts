/**
 * Ends an upstream answer that runs far past the output bound it was given (`max_tokens`, forwarded to
 * every upstream). An honest upstream stops at the bound; one that keeps producing (a bug, a proxy that
 * drops the field, a hostile server) would otherwise grow the delivery record, the answer being gathered and
 * the client's stream without end, while the charge is capped at the hold anyway.
 *
 * Counted with the gateway's own estimate (UTF-8 bytes / 3, ../billing/token-estimate.ts) of the text,
 * refusal and tool calls produced, so it is cheap and the same for every provider. The margin is generous
 * because the estimate is not the upstream's tokenizer: bytes / 3 over-counts most text (about 4 bytes a
 * token in English), and a model's long whitespace or repeated-character tokens can reach 8 to 16 bytes
 * each. A breach is an UpstreamError like any malformed answer: failover goes on to the next target (or,
 * mid-stream, continues or ends the stream with its error event).
 */
import { estimateTextTokens } from '../billing/token-estimate.js';
import type { AssistantMessage, ChunkDelta } from '../openai/chat-types.js';
import { UpstreamError, type EventBatches, type ProviderAdapter, type StreamEvent, type UpstreamCall } from './contract.js';

/** Estimated output tokens allowed for an attempt bounded at `maxTokens`: 4 x the bound, plus 1,024. */
export function outputAllowance(maxTokens: number): number {
  return maxTokens * 4 + 1024;
}

function outputOverrun(maxTokens: number, estimated: number): UpstreamError {
  return new UpstreamError(
    'protocol',
    `upstream kept producing past max_tokens ${maxTokens} (about ${estimated} tokens so far): the attempt was ended`,
  );
}

function deltaTokens(delta: ChunkDelta): number {
  let n = 0;
  if (delta.content) n += estimateTextTokens(delta.content);
  if (delta.refusal) n += estimateTextTokens(delta.refusal);
  for (const call of delta.tool_calls ?? []) {
    const fn = call.function;
    if (fn?.name) n += estimateTextTokens(fn.name);
    if (fn?.arguments) n += estimateTextTokens(fn.arguments);
  }
  return n;
}

function messageTokens(message: AssistantMessage): number {
  let n = 0;
  if (message.content) n += estimateTextTokens(message.content);
  if (message.refusal) n += estimateTextTokens(message.refusal);
  for (const call of message.tool_calls ?? []) {
    n += estimateTextTokens(call.function.name) + estimateTextTokens(call.function.arguments);
  }
  return n;
}

/**
 * The events of one attempt, ended with an UpstreamError (and the upstream released) once past the
 * allowance. The events of a batch before the one that crossed it are still delivered, as they would have
 * been one by one; the error comes at the next read.
 */
export function boundedEvents(events: EventBatches, maxTokens: number): AsyncIterableIterator<readonly StreamEvent[]> {
  const inner = events[Symbol.asyncIterator]();
  const allowance = outputAllowance(maxTokens);
  let produced = 0;
  let overrun: UpstreamError | null = null;
  const end = async (): Promise<never> => {
    await inner.return?.().catch(() => undefined);
    throw overrun;
  };
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    // A `then` on the inner read, not an async function around an await: this runs once per network read.
    next(): Promise<IteratorResult<readonly StreamEvent[]>> {
      if (overrun !== null) return end();
      return inner.next().then((result) => {
        if (result.done === true) return result;
        const batch = result.value;
        for (let i = 0; i < batch.length; i++) {
          const ev = batch[i] as StreamEvent;
          if (ev.type !== 'delta') continue;
          produced += deltaTokens(ev.delta);
          if (produced > allowance) {
            overrun = outputOverrun(maxTokens, produced);
            if (i === 0) return end();
            return { done: false, value: batch.slice(0, i) };
          }
        }
        return result;
      });
    },
    async return() {
      await inner.return?.();
      return { done: true, value: undefined };
    },
  };
}

/** `adapter`, with every answer held to its call's output bound (streamed, or checked whole when in one piece). */
export function boundOutput(adapter: ProviderAdapter): ProviderAdapter {
  return {
    name: adapter.name,
    protocol: adapter.protocol,
    paid: adapter.paid,
    async complete(call: UpstreamCall) {
      const answer = await adapter.complete(call);
      const estimated = messageTokens(answer.message);
      if (estimated > outputAllowance(call.request.max_tokens)) throw outputOverrun(call.request.max_tokens, estimated);
      return answer;
    },
    stream(call: UpstreamCall) {
      return adapter.stream(call).then((events) => boundedEvents(events, call.request.max_tokens));
    },
  };
}
