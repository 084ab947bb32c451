/**
 * Gathers a streamed answer into the one message a non-streaming client receives: text, refusal and tool
 * calls (whose pieces arrive by index) and the finish reason. What it costs is the delivery record's
 * business (./delivery.ts), not this one's.
 */
import type { AssistantMessage, ChunkDelta, FinishReason, ToolCall } from '../openai/chat-types.js';

export class AnswerBuilder {
  private content = '';
  private refusal: string | null = null;
  private readonly toolCalls: ToolCall[] = [];
  finishReason: FinishReason | null = null;

  add(delta: ChunkDelta, finishReason: FinishReason | null): void {
    if (delta.content) this.content += delta.content;
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
    };
  }
}
