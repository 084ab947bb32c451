/**
 * A non-streaming completion. The upstream is still called in streaming mode, so the same deadlines guard it
 * (time to first token, stalls) and a failed attempt is replaced by the next target before the client sees
 * anything; the answer is gathered, settled, and sent as one JSON body.
 */
import { estimateDeliveredTokens } from '../billing/token-estimate.js';
import type { ChatCompletion } from '../openai/chat-types.js';
import { AllTargetsFailed, FailoverStream } from '../routing/failover.js';
import { AnswerBuilder } from './answer-builder.js';
import { failoverOptions, meter, svcMetadata, usageRecord, type CompletionContext } from './context.js';
import { upstreamErrorToGateway } from './upstream-errors.js';

export async function completeNonStreaming(ctx: CompletionContext): Promise<ChatCompletion> {
  let answer = new AnswerBuilder();
  let stream: FailoverStream;
  try {
    stream = await FailoverStream.open(failoverOptions(ctx, 'restart'));
    for (;;) {
      const next = await stream.next();
      if (next.done) break;
      const ev = next.value;
      if (ev.type === 'restart') answer = new AnswerBuilder();
      else if (ev.type === 'usage') answer.usage = ev.usage;
      else answer.add(ev.delta, ev.finishReason);
    }
  } catch (e) {
    await ctx.meter.void();
    if (e instanceof AllTargetsFailed) throw upstreamErrorToGateway(e);
    throw e;
  }
  const target = stream.target;
  const m = meter(ctx, answer.usage, estimateDeliveredTokens(answer.deliveredText(), answer.deltas));
  const settled = await ctx.meter.settle(m.cost, usageRecord(ctx, target, m, 'completed'));
  const usage = answer.usage ?? { promptTokens: m.prompt, completionTokens: m.completion };
  return {
    id: ctx.completionId,
    object: 'chat.completion',
    created: ctx.created,
    model: ctx.route.entry.id,
    choices: [{ index: 0, message: answer.message(), finish_reason: answer.finishReason ?? 'stop', logprobs: null }],
    usage: {
      prompt_tokens: usage.promptTokens,
      completion_tokens: usage.completionTokens,
      total_tokens: usage.promptTokens + usage.completionTokens,
    },
    svc: svcMetadata(ctx, target, m, settled, stream.attempts),
  };
}
