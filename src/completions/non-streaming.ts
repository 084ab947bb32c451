/**
 * A non-streaming completion. The upstream is still called in streaming mode, so the same deadlines guard it
 * (time to first token, stalls) and a failed attempt is replaced by the next target before the client sees
 * anything; the answer is gathered, the owner settles it, and it is sent as one JSON body. A client that
 * hangs up, or a shutdown, ends it like any other ending: the charge follows src/billing/charge.ts.
 */
import type { Ending } from '../billing/charge.js';
import type { ChatCompletion } from '../openai/chat-types.js';
import { AnswerBuilder } from './answer-builder.js';
import type { Completion } from './completion.js';
import { completionError, endingOfFailure } from './upstream-errors.js';

export async function completeNonStreaming(completion: Completion): Promise<ChatCompletion> {
  let answer = new AnswerBuilder();
  let ending: Ending = 'completed';
  let failure: unknown = null;
  try {
    await completion.failover.open();
    for (;;) {
      const next = await completion.failover.next();
      if (next.done) break;
      const ev = next.value;
      if (ev.type === 'restart') answer = new AnswerBuilder();
      else if (ev.type === 'delta') answer.add(ev.delta, ev.finishReason);
    }
  } catch (e) {
    failure = e;
    ending = endingOfFailure(completion, e);
  }
  const settled = await completion.end(ending);
  if (failure !== null) throw completionError(completion, failure);
  const { spec } = completion;
  return {
    id: spec.completionId,
    object: 'chat.completion',
    created: completion.created,
    model: spec.route.entry.id,
    choices: [{ index: 0, message: answer.message(), finish_reason: answer.finishReason ?? 'stop', logprobs: null }],
    usage: {
      prompt_tokens: settled.promptTokens,
      completion_tokens: settled.completionTokens,
      total_tokens: settled.promptTokens + settled.completionTokens,
    },
    svc: completion.svcMetadata(settled),
  };
}
