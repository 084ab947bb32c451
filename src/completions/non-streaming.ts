/** A non-streaming completion: call the first accepting target, settle, answer one JSON body. */
import { estimateDeliveredTokens } from '../billing/token-estimate.js';
import type { ChatCompletion } from '../openai/chat-types.js';
import { AllTargetsFailed, firstAccepting } from '../routing/failover.js';
import { meter, svcMetadata, usageRecord, type CompletionContext } from './context.js';
import { upstreamErrorToGateway } from './upstream-errors.js';

export async function completeNonStreaming(ctx: CompletionContext): Promise<ChatCompletion> {
  const request = { ...ctx.request, max_tokens: ctx.quote.maxOutputTokens };
  let result;
  try {
    result = await firstAccepting(ctx.route.targets, (target) =>
      target.adapter.complete({ request, model: target.model, signal: ctx.clientSignal }),
    );
  } catch (e) {
    await ctx.meter.void();
    if (e instanceof AllTargetsFailed) throw upstreamErrorToGateway(e);
    throw e;
  }
  const { value: answer, target, attempts } = result;
  const message = answer.message;
  let deliveredText = message.content ?? '';
  for (const call of message.tool_calls ?? []) deliveredText += call.function.name + call.function.arguments;
  const m = meter(ctx, answer.usage, estimateDeliveredTokens(deliveredText, 1));
  const settled = await ctx.meter.settle(m.cost, usageRecord(ctx, target, m, 'completed'));
  const usage = answer.usage ?? { promptTokens: m.prompt, completionTokens: m.completion };
  return {
    id: ctx.completionId,
    object: 'chat.completion',
    created: ctx.created,
    model: ctx.route.entry.id,
    choices: [{ index: 0, message, finish_reason: answer.finishReason, logprobs: null }],
    usage: {
      prompt_tokens: usage.promptTokens,
      completion_tokens: usage.completionTokens,
      total_tokens: usage.promptTokens + usage.completionTokens,
    },
    svc: svcMetadata(ctx, target, m, settled, attempts),
  };
}
