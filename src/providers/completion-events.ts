/**
 * A whole completion as the stream events it would have been, in one batch: one delta with everything, then
 * the usage.
 * For upstream answers that arrive in one piece (an upstream that ignored `stream: true`, or a provider
 * configured with `upstream_streaming: false`).
 */
import type { StreamEvent, UpstreamCompletion } from './contract.js';

export async function* completionAsEvents(c: UpstreamCompletion): AsyncGenerator<StreamEvent[], void, undefined> {
  const { role, content, refusal, tool_calls, reasoning_content } = c.message;
  const batch: StreamEvent[] = [{
    type: 'delta',
    delta: {
      role,
      ...(reasoning_content ? { reasoning_content } : {}),
      content,
      ...(refusal !== undefined ? { refusal } : {}),
      ...(tool_calls ? { tool_calls: tool_calls.map((t, index) => ({ index, ...t })) } : {}),
    },
    finishReason: c.finishReason,
    ...(c.logprobs ? { logprobs: c.logprobs } : {}),
    ...(c.meta ? { meta: c.meta } : {}),
    ...(c.stopSequence !== undefined ? { stopSequence: c.stopSequence } : {}),
  }];
  if (c.usage) batch.push({ type: 'usage', usage: c.usage });
  yield batch;
}
