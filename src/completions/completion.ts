/**
 * The one owner of a completion: it opens the credit hold, keeps its lease alive while the completion lives,
 * holds the delivery record that failover and the output paths share, and ends the hold exactly once with
 * the charge src/billing/charge.ts decides. The output paths (streaming.ts, non-streaming.ts) only say how
 * the completion ended; no other place voids a hold or computes a charge.
 */
import { decideCharge, type Charge, type Ending } from '../billing/charge.js';
import { endUntilLedgerAnswers } from '../billing/hold-ending.js';
import { Meter, type MeterOutcome } from '../billing/meter.js';
import { promptTokensFor, type Quote } from '../billing/quote.js';
import { targetKey } from '../billing/media/media-estimate.js';
import { estimateDeliveredTokens } from '../billing/token-estimate.js';
import type { Clock } from '../core/clock.js';
import { type Deadline, repeatEvery } from '../core/deadline-timers.js';
import { StopSignal, type StopSignalLike } from '../core/stop-signal.js';
import type { Logger } from '../core/logger.js';
import type { RequestObservation } from '../observability/request-observation.js';
import type { ChatRequest, SvcMetadata } from '../openai/chat-types.js';
import { FailoverStream, type FailoverOptions } from '../routing/failover.js';
import type { Route, Target } from '../routing/router.js';
import type { ApiKeyRecord, LedgerStore } from '../store/types.js';
import { Delivery } from './delivery.js';
import type { CompletionRegistry } from './registry.js';

export interface CompletionLimits {
  /** Lifetime of a hold's lease; renewed every third of it while the completion lives. */
  holdLeaseMs: number;
  /** The longest a completion may run, across failover attempts. */
  requestTimeoutMs: number;
  /** Silence after which a stream gets an SSE comment. */
  keepaliveMs: number;
  /** How long a streaming client may stop reading before the gateway ends its stream. */
  writeTimeoutMs: number;
  /** Waits between retries of a ledger call the database did not answer. */
  ledgerRetryDelaysMs: readonly number[];
  /** `server.relay_reasoning`: whether the model's reasoning text reaches clients (default true). */
  relayReasoning?: boolean;
}

export interface CompletionDeps {
  ledger: LedgerStore;
  clock: Clock;
  logger: Logger;
  limits: CompletionLimits;
  registry: CompletionRegistry;
}

export interface CompletionRequest {
  key: ApiKeyRecord;
  request: ChatRequest;
  requestId: string;
  completionId: string;
  holdId: string;
  /** The hold id derives from the request (Idempotency-Key): an earlier run of it may hold it already. */
  holdIdFromRequest: boolean;
  route: Route;
  quote: Quote;
  /** Fires when the client goes away. */
  /** The client's going away: an AbortSignal (the app's path) or a StopSignal (the Node entry's). */
  clientSignal: StopSignalLike;
  afterPartial: FailoverOptions['afterPartial'];
  /** Metrics, trace and access line of the request (src/observability/); absent: not observed. */
  observation?: RequestObservation;
}

/** How the hold ended, with what the `svc` metadata and the usage chunk report. */
export interface Settlement {
  ending: Ending;
  charge: Charge;
  /**
   * What the ledger confirmed; null when it could not be reached through the in-line retries: the ending
   * is then retried in the background until it lands (the hold's lease still runs), and the client is told
   * the charge is pending.
   */
  outcome: MeterOutcome | null;
  target: Target | null;
  /** Tokens the charge was computed from (zero when voided). */
  promptTokens: number;
  completionTokens: number;
  /** Of promptTokens, read from the provider's cache; of completionTokens, spent reasoning (charge.ts). */
  cachedTokens: number;
  reasoningTokens: number;
  latencyMs: number;
}

export class Completion {
  readonly delivery = new Delivery();
  readonly failover: FailoverStream;
  /** Unix seconds, shared by every chunk of the completion. */
  readonly created: number;
  private readonly startedAt = performance.now();
  /**
   * Aborts the upstream call: when the client goes away (with the client's reason) or when the completion
   * is interrupted. One signal for both, rather than a signal combining two; a StopSignal, not an
   * AbortController, whose event machinery Node builds per signal (src/core/stop-signal.ts).
   */
  private readonly stop = new StopSignal();
  private interruption: Extract<Ending, 'shutdown' | 'write_timeout'> | null = null;
  private readonly interruptListeners: ((reason: Extract<Ending, 'shutdown' | 'write_timeout'>) => void)[] = [];
  private ending: Promise<Settlement> | null = null;
  /** The lease renewals, on the process's deadlines (src/core/deadline-timers.ts); null once ending. */
  private renewal: Deadline | null = null;

  private constructor(
    private readonly deps: CompletionDeps,
    readonly spec: CompletionRequest,
    private readonly meter: Meter,
  ) {
    this.created = Math.floor(deps.clock.now() / 1000);
    const client = spec.clientSignal;
    if (client.aborted) this.stop.abort(client.reason);
    else client.addEventListener('abort', () => this.stop.abort(client.reason), { once: true });
    const unservable = spec.quote.unservableTargets;
    const targets = unservable.length === 0 ? spec.route.targets : spec.route.targets.filter((t) => !unservable.includes(targetKey(t)));
    this.failover = new FailoverStream({
      // Observed attempts: their spans, the time spent on upstreams, the first token.
      targets: spec.observation?.attach(spec.route.entry.id, targets) ?? targets,
      request: { ...spec.request, max_tokens: spec.quote.maxOutputTokens },
      clientSignal: this.stop,
      requestDeadlineAt: performance.now() + deps.limits.requestTimeoutMs,
      afterPartial: spec.afterPartial,
      countTokens: (text) => estimateDeliveredTokens(text, 0),
      delivery: this.delivery,
    });
  }

  /** Holds the worst case (or throws the 402 that says why not) and registers the completion. */
  static async open(deps: CompletionDeps, spec: CompletionRequest): Promise<Completion> {
    deps.registry.admit();
    let meter: Meter;
    try {
      const reserve = (): Promise<Meter> => Meter.open(
        deps.ledger,
        {
          holdId: spec.holdId,
          keyId: spec.key.id,
          inFamily: spec.key.parentKeyId !== null,
          accountId: spec.key.accountId,
          environment: spec.key.environment,
          amount: spec.quote.worstCaseCredits,
          leaseMs: deps.limits.holdLeaseMs,
          mayExist: spec.holdIdFromRequest,
        },
        deps.limits.ledgerRetryDelaysMs,
      );
      // In the reservation's span; a refusal is counted by its reason.
      meter = await (spec.observation?.reserve(spec.route.entry.id, reserve) ?? reserve());
    } catch (e) {
      deps.registry.abandon();
      throw e;
    }
    const completion = new Completion(deps, spec, meter);
    deps.registry.add(completion);
    // Every third of the lease, while the completion lives.
    completion.renewal = repeatEvery(Math.max(100, Math.floor(deps.limits.holdLeaseMs / 3)), () => completion.renewLease());
    return completion;
  }

  get limits(): CompletionLimits {
    return this.deps.limits;
  }

  /** Runs `listener` once if the completion is interrupted (shutdown, a client that stopped reading). */
  onInterrupt(listener: (reason: Extract<Ending, 'shutdown' | 'write_timeout'>) => void): void {
    this.interruptListeners.push(listener);
  }

  /**
   * Ends the completion from outside (shutdown, a client that stopped reading): the upstream call is aborted
   * and the output path, seeing the abort, ends with this reason.
   */
  interrupt(reason: Extract<Ending, 'shutdown' | 'write_timeout'>): void {
    if (this.ending !== null || this.interruption !== null) return;
    this.interruption = reason;
    // The upstream call is aborted first (the stop signal's own listeners), then the output path is told;
    // told even when the client had left before and the stop signal was already aborted.
    this.stop.abort(reason);
    for (const listener of this.interruptListeners.splice(0)) listener(reason);
  }

  /**
   * The ending of a completion whose upstream call was aborted: an interruption, else the client left, else
   * the request's own deadline passed while the client held the stream back (the upstream is not to blame,
   * but the answer did not finish).
   */
  abortedEnding(): Ending {
    if (this.interruption !== null) return this.interruption;
    return this.spec.clientSignal.aborted ? 'client_closed' : 'upstream_error';
  }

  /** Ends the hold exactly once; every later call returns the first settlement. */
  end(ending: Ending): Promise<Settlement> {
    // In the settlement's span: the hold's outcome is counted and kept for the access line.
    this.ending ??= (this.spec.observation?.settle(this.meter.holdId, this.failover.attempts, () => this.settle(ending)) ?? this.settle(ending)).then(
      (settlement) => {
        this.deps.registry.delete(this);
        return settlement;
      },
      (e: unknown) => {
        this.deps.registry.delete(this);
        throw e;
      },
    );
    return this.ending;
  }

  svcMetadata(s: Settlement): SvcMetadata {
    const target = s.target ?? this.spec.route.targets[0];
    const provider = target?.adapter.name ?? 'none';
    const svc: SvcMetadata = {
      requested_model: this.spec.route.entry.id,
      routed_model: `${provider}/${target?.model ?? 'none'}`,
      routed_provider: provider,
      credits_used: s.outcome?.charged ?? (s.charge.kind === 'settle' ? s.charge.credits : 0),
      balance_remaining: s.outcome?.balanceRemaining ?? null,
      tokens_metered: { prompt: s.promptTokens, completion: s.completionTokens, total: s.promptTokens + s.completionTokens },
      latency_ms: s.latencyMs,
    };
    if (s.outcome === null) svc.settlement = 'pending';
    const decision = this.spec.route.decision;
    if (decision) svc.routing = { tier: decision.tier, confidence: decision.confidence, reason: decision.reason };
    if (this.failover.attempts.length > 1) svc.attempts = this.failover.attempts;
    return svc;
  }

  private async settle(ending: Ending): Promise<Settlement> {
    this.renewal?.cancel();
    this.renewal = null;
    // Whatever is still open upstream is closed before the charge is read (no-op when it finished).
    await this.failover.close(ending);
    const { route, quote, requestId } = this.spec;
    const target = this.failover.target;
    const charge = decideCharge({
      prices: route.entry,
      // The serving target's estimate (attachments count differently per provider), else the held one.
      promptEstimate: target === null ? quote.promptTokens : promptTokensFor(quote, target.adapter.name, target.model),
      held: this.meter.held,
      delivery: this.delivery.facts(),
      ending,
    });
    const latencyMs = Math.max(0, Math.round(performance.now() - this.startedAt));
    if (charge.kind === 'void') {
      const outcome = await this.untilLedgerAnswers(() => this.meter.void());
      return { ending, charge, outcome, target, promptTokens: 0, completionTokens: 0, cachedTokens: 0, reasoningTokens: 0, latencyMs };
    }
    const routedProvider = target?.adapter.name ?? 'none';
    const usage = {
      requestId,
      model: route.entry.id,
      routedModel: `${routedProvider}/${target?.model ?? 'none'}`,
      routedProvider,
      promptTokens: charge.promptTokens,
      completionTokens: charge.completionTokens,
      cachedTokens: charge.cachedTokens,
      reasoningTokens: charge.reasoningTokens,
      shortfallCredits: charge.shortfallCredits,
      outcome: ending,
      latencyMs,
    };
    const outcome = await this.untilLedgerAnswers(() => this.meter.settle(charge.credits, usage));
    if (charge.shortfallCredits > 0) {
      this.deps.logger.warn('upstream usage exceeded the hold', {
        requestId,
        holdId: this.meter.holdId,
        held: this.meter.held,
        shortfallCredits: charge.shortfallCredits,
        promptTokens: charge.promptTokens,
        completionTokens: charge.completionTokens,
      });
    }
    return {
      ending,
      charge,
      outcome,
      target,
      promptTokens: charge.promptTokens,
      completionTokens: charge.completionTokens,
      cachedTokens: charge.cachedTokens,
      reasoningTokens: charge.reasoningTokens,
      latencyMs,
    };
  }

  private untilLedgerAnswers(end: () => Promise<MeterOutcome>): Promise<MeterOutcome | null> {
    return endUntilLedgerAnswers(
      { logger: this.deps.logger, registry: this.deps.registry, holdLeaseMs: this.deps.limits.holdLeaseMs },
      this.meter,
      this.spec.requestId,
      end,
    );
  }

  private renewLease(): void {
    this.meter.renew().then(
      (renewed) => {
        if (!renewed && this.ending === null) {
          this.deps.logger.warn('hold lease could not be renewed', { requestId: this.spec.requestId, holdId: this.meter.holdId });
        }
      },
      (e: unknown) => this.deps.logger.warn('hold lease renewal failed', { requestId: this.spec.requestId, holdId: this.meter.holdId, error: String(e) }),
    );
  }
}
