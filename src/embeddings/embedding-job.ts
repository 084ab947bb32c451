/**
 * One embeddings request's life, the same promise as a completion's: hold the worst case, try the targets in
 * order (another one after a failure that another may not have: connect, timeout, 429, 5xx, a bad answer),
 * and end the hold exactly once: settled with the upstream's token count (the estimate when it gives none),
 * capped at the hold, or voided when no target answered. A client that hangs up does not abort the call: the
 * upstream is paid for it either way, so the gateway finishes it and charges it.
 */
import { endUntilLedgerAnswers } from '../billing/hold-ending.js';
import { Meter, type MeterOutcome } from '../billing/meter.js';
import { creditCost } from '../billing/pricing.js';
import { estimateTextTokens } from '../billing/token-estimate.js';
import type { AppDeps } from '../core/deps.js';
import { UpstreamError } from '../providers/contract.js';
import { abortedError } from '../providers/upstream-failures.js';
import { AllTargetsFailed, cannotServe, requestRefused } from '../routing/failover.js';
import type { ApiKeyRecord } from '../store/types.js';
import type { EmbeddingResult } from './contract.js';
import type { EmbeddingRequest } from './embedding-request.js';
import type { EmbeddingRoute, EmbeddingTarget } from './embedding-routes.js';

export interface EmbeddingAttempt {
  provider: string;
  model: string;
  outcome: string;
}

export interface EmbeddingOutcome {
  result: EmbeddingResult;
  target: EmbeddingTarget;
  promptTokens: number;
  credits: number;
  /** Credits the upstream's count would have cost beyond the hold (not charged). */
  shortfallCredits: number;
  holdId: string;
  outcome: MeterOutcome | null;
  attempts: EmbeddingAttempt[];
  latencyMs: number;
}

/** The completions' price rule (src/billing/pricing.ts), with no output tokens. */
function creditsFor(tokens: number, creditsPer1k: number): number {
  return creditCost({ inputCreditsPer1k: creditsPer1k, outputCreditsPer1k: 0 }, tokens, 0);
}

export function estimateEmbeddingTokens(inputs: readonly string[]): number {
  return inputs.reduce((sum, t) => sum + estimateTextTokens(t), 0);
}

function outcomeOf(e: UpstreamError): string {
  return e.kind === 'http' && e.status !== null ? `http_${e.status}` : e.kind;
}

export async function runEmbedding(
  deps: AppDeps,
  spec: { key: ApiKeyRecord; request: EmbeddingRequest; route: EmbeddingRoute; requestId: string; holdId: string; estimate: number; clientSignal: AbortSignal },
): Promise<EmbeddingOutcome> {
  const startedAt = performance.now();
  const held = Math.max(1, creditsFor(spec.estimate, spec.route.creditsPer1kTokens));
  const registry = deps.completions;
  registry.admit();
  let meter: Meter;
  try {
    meter = await Meter.open(
      deps.store.ledger,
      {
        holdId: spec.holdId,
        keyId: spec.key.id,
        inFamily: spec.key.parentKeyId !== null,
        accountId: spec.key.accountId,
        environment: spec.key.environment,
        amount: held,
        leaseMs: deps.limits.holdLeaseMs,
      },
      deps.limits.ledgerRetryDelaysMs,
    );
  } catch (e) {
    registry.abandon();
    throw e;
  }
  // The work is tracked from here to its ending, so shutdown waits for it and closes the store only after.
  let done!: () => void;
  registry.track(new Promise<void>((resolve) => (done = resolve)));
  registry.abandon();
  const ending = { logger: deps.logger, registry, holdLeaseMs: deps.limits.holdLeaseMs };
  try {
    const targets = spec.key.environment === 'test' ? spec.route.testTargets : spec.route.targets;
    const deadlineAt = performance.now() + deps.limits.requestTimeoutMs;
    const failures: UpstreamError[] = [];
    const attempts: EmbeddingAttempt[] = [];
    let served: { result: EmbeddingResult; target: EmbeddingTarget } | null = null;
    for (const target of targets) {
      if (spec.clientSignal.aborted) break;
      if (target.health.admit() === 'skip') {
        attempts.push({ provider: target.adapter.name, model: target.model, outcome: 'skipped_open_circuit' });
        continue;
      }
      const remaining = deadlineAt - performance.now();
      if (remaining <= 0) break;
      const calledAt = performance.now();
      try {
        const result = await target.adapter.embed({
          model: target.model,
          inputs: spec.request.inputs,
          dimensions: spec.request.dimensions,
          user: spec.request.user,
          signal: AbortSignal.timeout(Math.ceil(remaining)),
        });
        target.health.success(Math.round(performance.now() - calledAt));
        attempts.push({ provider: target.adapter.name, model: target.model, outcome: 'ok' });
        served = { result, target };
        break;
      } catch (e) {
        if (!(e instanceof UpstreamError)) deps.logger.error('embedding adapter failed with an unexpected error', { requestId: spec.requestId, error: String(e) });
        const error = e instanceof UpstreamError ? e : new UpstreamError('protocol', e instanceof Error ? e.message : String(e));
        failures.push(error);
        attempts.push({ provider: target.adapter.name, model: target.model, outcome: outcomeOf(error) });
        // The same rules as a completion's failover: a refusal of the request ends it, a target that cannot
        // take it (a parameter this model lacks) is not unhealthy, any other failure counts against it.
        if (error.kind === 'aborted' || requestRefused(error)) {
          target.health.release();
          break;
        }
        if (cannotServe(error)) target.health.release();
        else target.health.failure();
        if (!error.retryable && !cannotServe(error)) break;
      }
    }
    if (served !== null) {
      const { result, target } = served;
      // An upstream that says a non-empty input cost nothing is not believed: the estimate is charged.
      const promptTokens = result.promptTokens !== null && result.promptTokens > 0 ? result.promptTokens : spec.estimate;
      const due = creditsFor(promptTokens, spec.route.creditsPer1kTokens);
      const credits = Math.min(due, meter.held);
      const shortfallCredits = due - credits;
      const latencyMs = Math.max(0, Math.round(performance.now() - startedAt));
      const routedProvider = target.adapter.name;
      const outcome = await endUntilLedgerAnswers(ending, meter, spec.requestId, () =>
        meter.settle(credits, {
          requestId: spec.requestId,
          model: spec.route.alias,
          routedModel: `${routedProvider}/${target.model}`,
          routedProvider,
          promptTokens,
          completionTokens: 0,
          outcome: 'completed',
          latencyMs,
          shortfallCredits,
        }),
      );
      if (shortfallCredits > 0) {
        deps.logger.warn('upstream usage exceeded the hold', { requestId: spec.requestId, holdId: meter.holdId, held: meter.held, shortfallCredits, promptTokens });
      }
      return { result, target, promptTokens, credits, shortfallCredits, holdId: meter.holdId, outcome, attempts, latencyMs };
    }
    await endUntilLedgerAnswers(ending, meter, spec.requestId, () => meter.void());
    const last = failures.at(-1) ?? (spec.clientSignal.aborted ? abortedError(spec.clientSignal) : new UpstreamError('timeout', 'the request deadline passed before any target answered'));
    // The same failure as a completion's, so the client gets the same errors table (docs/errors.md).
    throw new AllTargetsFailed(last, attempts, failures.length > 0 ? failures : [last]);
  } finally {
    done();
  }
}
