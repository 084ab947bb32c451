/**
 * Everything one chat completion carries from admission to settlement, and the pieces both the
 * streaming and the non-streaming paths share: metered tokens and the `svc` metadata.
 */
import type { Meter, MeterOutcome } from '../billing/meter.js';
import { creditCost } from '../billing/pricing.js';
import type { Quote } from '../billing/quote.js';
import type { Clock } from '../core/clock.js';
import type { ChatRequest, SvcMetadata } from '../openai/chat-types.js';
import type { UpstreamTokens } from '../providers/contract.js';
import { estimateDeliveredTokens } from '../billing/token-estimate.js';
import type { Attempt, FailoverOptions } from '../routing/failover.js';
import type { Route, Target } from '../routing/router.js';
import type { ApiKeyRecord, UsageRecord } from '../store/types.js';

export interface CompletionContext {
  clock: Clock;
  key: ApiKeyRecord;
  request: ChatRequest;
  requestId: string;
  completionId: string;
  /** Unix seconds, shared by every chunk of the completion. */
  created: number;
  startedAt: number;
  route: Route;
  quote: Quote;
  meter: Meter;
  /** Fires when the client goes away. */
  clientSignal: AbortSignal;
  /** Epoch ms (real time, not the ledger clock) after which no upstream attempt may run. */
  requestDeadlineAt: number;
  /** Silence after which a stream gets an SSE comment. */
  keepaliveMs: number;
}

export function failoverOptions(ctx: CompletionContext, afterPartial: FailoverOptions['afterPartial']): FailoverOptions {
  return {
    targets: ctx.route.targets,
    request: { ...ctx.request, max_tokens: ctx.quote.maxOutputTokens },
    clientSignal: ctx.clientSignal,
    requestDeadlineAt: ctx.requestDeadlineAt,
    afterPartial,
    countTokens: (text) => estimateDeliveredTokens(text, 0),
  };
}

export interface Metered {
  prompt: number;
  completion: number;
  cost: number;
}

/** Upstream-reported tokens when present, the gateway's estimate otherwise; never beyond the hold. */
export function meter(ctx: CompletionContext, upstream: UpstreamTokens | null, completionEstimate: number): Metered {
  const prompt = upstream?.promptTokens ?? ctx.quote.promptTokens;
  const completion = Math.min(upstream?.completionTokens ?? completionEstimate, ctx.quote.maxOutputTokens);
  const cost = Math.min(creditCost(ctx.route.entry, prompt, completion), ctx.meter.held);
  return { prompt, completion, cost };
}

export function usageRecord(ctx: CompletionContext, target: Target, m: Metered, outcome: string): UsageRecord {
  return {
    requestId: ctx.requestId,
    model: ctx.route.entry.id,
    routedModel: `${target.adapter.name}/${target.model}`,
    routedProvider: target.adapter.name,
    promptTokens: m.prompt,
    completionTokens: m.completion,
    outcome,
    latencyMs: ctx.clock.now() - ctx.startedAt,
  };
}

export function svcMetadata(
  ctx: CompletionContext,
  target: Target,
  m: Metered,
  settled: MeterOutcome,
  attempts: Attempt[],
): SvcMetadata {
  const svc: SvcMetadata = {
    requested_model: ctx.route.entry.id,
    routed_model: `${target.adapter.name}/${target.model}`,
    routed_provider: target.adapter.name,
    credits_used: settled.charged,
    balance_remaining: settled.balanceRemaining,
    tokens_metered: { prompt: m.prompt, completion: m.completion, total: m.prompt + m.completion },
    latency_ms: ctx.clock.now() - ctx.startedAt,
  };
  if (ctx.route.decision) {
    const d = ctx.route.decision;
    svc.routing = { tier: d.tier, confidence: d.confidence, reason: d.reason };
  }
  if (attempts.length > 1) svc.attempts = attempts;
  return svc;
}
