/**
 * How an adapter without a native prefill asks a chat upstream to continue an answer another target started:
 * the partial answer as the assistant's turn, then one instruction. Adapters whose protocol continues a
 * trailing assistant turn by itself (Anthropic's prefill) do not use this.
 */
import type { ChatMessage } from '../openai/chat-types.js';

export const CONTINUE_INSTRUCTION =
  'Your previous answer was cut off. Continue it exactly where it stopped, mid-word if need be. ' +
  'Do not repeat any of it and do not comment on the interruption.';

export function continuationMessages(messages: readonly ChatMessage[], partial: string): ChatMessage[] {
  return [...messages, { role: 'assistant', content: partial }, { role: 'user', content: CONTINUE_INSTRUCTION }];
}
