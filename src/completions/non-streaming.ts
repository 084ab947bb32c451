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
import { tokenUsage } from './token-usage.js';
import { completionError, endingOfFailure } from './upstream-errors.js';

/** The answer, and what no chat field says: the stop sequence that ended it, where the upstream said (Anthropic). */
export interface NonStreamingAnswer {
  answer: ChatCompletion;
  stopSequence: string | null;
}

export async function completeNonStreaming(completion: Completion): Promise<NonStreamingAnswer> {
  const relayReasoning = completion.limits.relayReasoning !== false;
  let answer = new AnswerBuilder(relayReasoning);
  let ending: Ending = 'completed';
  let failure: unknown = null;
  try {
    await completion.failover.open();
    for (;;) {
      const next = await completion.failover.next();
      if (next.done) break;
      for (const ev of next.value) {
        if (ev.type === 'restart') answer = new AnswerBuilder(relayReasoning);
        else if (ev.type === 'delta') {
          answer.add(ev.delta, ev.finishReason, ev.logprobs, ev.meta);
          if (ev.stopSequence !== undefined) answer.stopSequence = ev.stopSequence;
        }
        else if (ev.meta !== undefined) answer.meta = { ...answer.meta, ...ev.meta };
      }
    }
  } catch (e) {
    failure = e;
    ending = endingOfFailure(completion, e);
  }
  const settled = await completion.end(ending);
  if (failure !== null) throw completionError(completion, failure);
  const { spec } = completion;
  const out: ChatCompletion = {
    id: spec.completionId,
    object: 'chat.completion',
    created: completion.created,
    model: spec.route.entry.id,
    choices: [{ index: 0, message: answer.message(), finish_reason: answer.finishReason ?? 'stop', logprobs: answer.logprobs() }],
    usage: tokenUsage(settled),
    svc: completion.svcMetadata(settled),
  };
  // What the upstream said of itself, where OpenAI puts it (before `choices` matters to no client).
  if (answer.meta.serviceTier !== undefined) out.service_tier = answer.meta.serviceTier;
  if (answer.meta.systemFingerprint !== undefined) out.system_fingerprint = answer.meta.systemFingerprint;
  return { answer: out, stopSequence: answer.stopSequence };
}
