/** A whole `generateContent` answer -> UpstreamCompletion. */
import type { UpstreamCompletion } from '../contract.js';
import type { AssistantMessage } from '../../openai/chat-types.js';
import { protocolError } from '../upstream-failures.js';
import { readChunk, responseKey, toFinishReason, toToolCall } from './chunk-reading.js';

export function parseCompletion(payload: unknown): UpstreamCompletion {
  const reading = readChunk(payload);
  if (!reading.hasCandidate) throw protocolError('upstream response has no candidates');
  const key = responseKey(reading.responseId);
  const toolCalls = reading.functionCalls.map((call, i) => toToolCall(call, key, i));
  const message: AssistantMessage = {
    role: 'assistant',
    // As OpenAI does: null content only beside tool calls; a filtered answer with no text is ''.
    content: reading.text.length > 0 || toolCalls.length === 0 ? reading.text : null,
  };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (reading.reasoning.length > 0) message.reasoning_content = reading.reasoning;
  // A whole answer did finish; a missing reason (seen on some proxies) means the model stopped.
  const finishReason = toFinishReason(reading.finishReason ?? 'STOP', toolCalls.length > 0);
  return { message, finishReason, usage: reading.usage, model: reading.model };
}
