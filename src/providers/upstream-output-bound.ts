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
import { UpstreamError, type ProviderAdapter, type StreamEvent, type UpstreamCall } from './contract.js';

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
 * The bound on one attempt's streamed answer, checked batch by batch by whoever reads the attempt
 * (../routing/failover.ts), synchronously: as a wrapper around the attempt's events it cost every read of
 * every request a promise and a closure. The events of a batch before the one that crossed the allowance
 * are still delivered, as they would have been one by one; the reader then ends the attempt with `overrun`
 * (and releases the upstream) before it reads again.
 */
export class OutputBound {
  private readonly allowance: number;
  private produced = 0;
  /** Set once the answer went past the allowance: the attempt's error. */
  overrun: UpstreamError | null = null;

  constructor(private readonly maxTokens: number) {
    this.allowance = outputAllowance(maxTokens);
  }

  /** `batch`, or the events of it before the one that crossed the allowance (then `overrun` is set). */
  check(batch: readonly StreamEvent[]): readonly StreamEvent[] {
    for (let i = 0; i < batch.length; i++) {
      const ev = batch[i] as StreamEvent;
      if (ev.type !== 'delta') continue;
      this.produced += deltaTokens(ev.delta);
      if (this.produced > this.allowance) {
        this.overrun = outputOverrun(this.maxTokens, this.produced);
        return batch.slice(0, i);
      }
    }
    return batch;
  }
}

/**
 * An adapter whose one-piece answers are checked against the bound before they are returned. Its streams
 * are bounded by their reader (`OutputBound`), which sees every attempt's batches anyway.
 */
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
    stream: (call: UpstreamCall) => adapter.stream(call),
  };
}
