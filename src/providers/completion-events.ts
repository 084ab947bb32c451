/**
 * A whole completion as the stream events it would have been: one delta with everything, then the usage.
 * For upstream answers that arrive in one piece (an upstream that ignored `stream: true`, or a provider
 * configured with `upstream_streaming: false`).
 */
import type { StreamEvent, UpstreamCompletion } from './contract.js';

export async function* completionAsEvents(c: UpstreamCompletion): AsyncGenerator<StreamEvent, void, undefined> {
  const { role, content, refusal, tool_calls } = c.message;
  yield {
    type: 'delta',
    delta: {
      role,
      content,
      ...(refusal !== undefined ? { refusal } : {}),
      ...(tool_calls ? { tool_calls: tool_calls.map((t, index) => ({ index, ...t })) } : {}),
    },
    finishReason: c.finishReason,
  };
  if (c.usage) yield { type: 'usage', usage: c.usage };
}
