/**
 * Gathers a streamed answer into the one message a non-streaming client receives: text, refusal and tool
 * calls (whose pieces arrive by index), the finish reason and the upstream's usage.
 */
import type { AssistantMessage, ChunkDelta, FinishReason, ToolCall } from '../openai/chat-types.js';
import type { UpstreamTokens } from '../providers/contract.js';

export class AnswerBuilder {
  private content = '';
  private refusal: string | null = null;
  private readonly toolCalls: ToolCall[] = [];
  finishReason: FinishReason | null = null;
  usage: UpstreamTokens | null = null;
  /** Non-empty deltas, the floor of the completion-token estimate. */
  deltas = 0;

  add(delta: ChunkDelta, finishReason: FinishReason | null): void {
    if (delta.content) {
      this.content += delta.content;
      this.deltas++;
    }
    if (delta.refusal) {
      this.refusal = (this.refusal ?? '') + delta.refusal;
      this.deltas++;
    }
    for (const piece of delta.tool_calls ?? []) {
      this.deltas++;
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

  /** The text the charge is estimated from when the upstream reports no usage. */
  deliveredText(): string {
    let text = this.content + (this.refusal ?? '');
    for (const call of this.toolCalls) if (call) text += call.function.name + call.function.arguments;
    return text;
  }

  message(): AssistantMessage {
    const calls = this.toolCalls.filter((c): c is ToolCall => c !== undefined);
    return {
      role: 'assistant',
      content: this.content.length > 0 || calls.length === 0 ? this.content : null,
      refusal: this.refusal,
      ...(calls.length > 0 ? { tool_calls: calls } : {}),
    };
  }
}
