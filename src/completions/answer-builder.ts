/**
 * Gathers a streamed answer into the one message a non-streaming client receives: text, refusal and tool
 * calls (whose pieces arrive by index) and the finish reason. What it costs is the delivery record's
 * business (./delivery.ts), not this one's.
 */
import type { AssistantMessage, ChoiceLogprobs, ChunkDelta, FinishReason, TokenLogprob, ToolCall } from '../openai/chat-types.js';
import type { UpstreamMeta } from '../providers/contract.js';

export class AnswerBuilder {
  private content = '';
  private reasoning = '';
  private refusal: string | null = null;
  private readonly toolCalls: ToolCall[] = [];
  /** Null until an upstream sent some: an answer without logprobs says `logprobs: null`, as OpenAI's does. */
  private logprobContent: TokenLogprob[] | null = null;
  private logprobRefusal: TokenLogprob[] | null = null;
  finishReason: FinishReason | null = null;
  /** The stop sequence that ended the answer, where the upstream said (the Anthropic door reports it). */
  stopSequence: string | null = null;
  meta: UpstreamMeta = {};

  constructor(private readonly relayReasoning = true) {}

  add(delta: ChunkDelta, finishReason: FinishReason | null, logprobs?: ChoiceLogprobs, meta?: UpstreamMeta): void {
    if (delta.content) this.content += delta.content;
    if (delta.reasoning_content && this.relayReasoning) this.reasoning += delta.reasoning_content;
    if (logprobs?.content) this.logprobContent = [...(this.logprobContent ?? []), ...logprobs.content];
    if (logprobs?.refusal) this.logprobRefusal = [...(this.logprobRefusal ?? []), ...logprobs.refusal];
    if (meta !== undefined) this.meta = { ...this.meta, ...meta };
    if (delta.refusal) this.refusal = (this.refusal ?? '') + delta.refusal;
    for (const piece of delta.tool_calls ?? []) {
      let call = this.toolCalls[piece.index];
      if (call === undefined) {
        call = { id: '', type: 'function', function: { name: '', arguments: '' } };
        this.toolCalls[piece.index] = call;
      }
      if (piece.id) call.id = piece.id;
      if (piece.function?.name) call.function.name += piece.function.name;
      if (piece.function?.arguments) call.function.arguments += piece.function.arguments;
    }
    if (finishReason !== null) this.finishReason = finishReason;
  }

  message(): AssistantMessage {
    const calls = this.toolCalls.filter((c): c is ToolCall => c !== undefined);
    return {
      role: 'assistant',
      content: this.content.length > 0 || calls.length === 0 ? this.content : null,
      refusal: this.refusal,
      ...(calls.length > 0 ? { tool_calls: calls } : {}),
      ...(this.reasoning.length > 0 ? { reasoning_content: this.reasoning } : {}),
    };
  }

  logprobs(): ChoiceLogprobs | null {
    if (this.logprobContent === null && this.logprobRefusal === null) return null;
    return { content: this.logprobContent, refusal: this.logprobRefusal };
  }
}
