/**
 * The one record of what a completion's upstreams produced: written by failover as events pass through it
 * (src/routing/failover.ts), read by both output paths and by the charge (src/billing/charge.ts). Before
 * this record, the delivered text was tracked three times and the three copies could disagree.
 */
import type { DeliveryFacts, Produced } from '../billing/charge.js';
import type { ChunkDelta, FinishReason } from '../openai/chat-types.js';
import type { UpstreamTokens } from '../providers/contract.js';

export class Delivery {
  /** An upstream accepted the call (2xx). Never goes back to false. */
  accepted = false;
  /** Output of earlier attempts that the live one continues (continue mode). */
  private prefix: Produced = { text: '', deltas: 0 };
  /** Output of the live (or last) attempt. */
  private tail: Produced = { text: '', deltas: 0 };
  /**
   * The answer's part of prefix and tail: what a continuation goes on from. Reasoning text is output the
   * upstream billed (so it is in prefix and tail, which the charge counts) but not part of the answer.
   */
  private prefixAnswer = '';
  private tailAnswer = '';
  private tailToolCall = false;
  /** The live (or last) attempt gave its finish reason: a usage it reports from then on is its final count. */
  private tailFinished = false;
  /** The live (or last) attempt's reported usage. */
  private usage: UpstreamTokens | null = null;

  /** A target answered 2xx: the provider bills from here on. */
  accept(): void {
    this.accepted = true;
  }

  /** A delta the live attempt produced. */
  produce(delta: ChunkDelta, finishReason: FinishReason | null = null): void {
    if (finishReason !== null) this.tailFinished = true;
    let text = '';
    if (delta.content) text += delta.content;
    if (delta.refusal) text += delta.refusal;
    if (delta.tool_calls !== undefined) {
      this.tailToolCall = true;
      for (const call of delta.tool_calls) text += (call.function?.name ?? '') + (call.function?.arguments ?? '');
    }
    this.tailAnswer += text;
    if (delta.reasoning_content) text += delta.reasoning_content;
    if (text.length === 0) return;
    this.tail.text += text;
    this.tail.deltas++;
  }

  reportUsage(usage: UpstreamTokens): void {
    this.usage = usage;
  }

  /** Whether the live attempt produced any of the answer (reasoning alone is not: a retry may start over). */
  get attemptProduced(): boolean {
    return this.tailAnswer.length > 0 || this.tailToolCall;
  }

  /** The live attempt gave its finish reason: the answer is whole, whatever happens to its stream after. */
  get attemptFinished(): boolean {
    return this.tailFinished;
  }

  get attemptProducedToolCall(): boolean {
    return this.tailToolCall;
  }

  /** What a continuing attempt must go on from: every text the client holds so far. */
  get continuedText(): string {
    return this.prefixAnswer;
  }

  /** The live attempt failed after producing text that the client keeps; the next attempt continues it. */
  splice(): void {
    this.prefix = { text: this.prefix.text + this.tail.text, deltas: this.prefix.deltas + this.tail.deltas };
    this.prefixAnswer += this.tailAnswer;
    this.resetAttempt();
  }

  /** The live attempt failed and its output is thrown away (non-streaming): the next one starts over. */
  restart(): void {
    this.resetAttempt();
  }

  facts(): DeliveryFacts {
    return {
      accepted: this.accepted,
      prefix: { ...this.prefix },
      tail: { ...this.tail },
      finished: this.tailFinished,
      usage: this.usage,
    };
  }

  private resetAttempt(): void {
    this.tail = { text: '', deltas: 0 };
    this.tailAnswer = '';
    this.tailToolCall = false;
    this.tailFinished = false;
    this.usage = null;
  }
}
