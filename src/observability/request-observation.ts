/**
 * One request as the operator sees it: its metrics, its trace (when tracing is on) and its access line.
 * Created per request by src/http/middleware/observe.ts; the completion's owner (src/completions/completion.ts)
 * reports to it what only it knows (the hold, the upstream attempts, the charge). Runtime-agnostic.
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, context as otelContext, trace, type Context, type Span } from '@opentelemetry/api';
import type { Settlement } from '../completions/completion.js';
import type { Logger } from '../core/logger.js';
import { GatewayError } from '../openai/errors.js';
import type { AttemptWatch, EventBatches, ProviderAdapter, UpstreamCall, UpstreamCompletion, WatchedBatches } from '../providers/contract.js';
import { UpstreamError } from '../providers/contract.js';
import type { Target } from '../routing/router.js';
import {
  GEN_AI_INPUT_MESSAGES,
  GEN_AI_OPERATION_NAME,
  GEN_AI_OUTPUT_MESSAGES,
  GEN_AI_PROVIDER_NAME,
  GEN_AI_REQUEST_MAX_TOKENS,
  GEN_AI_REQUEST_MODEL,
  GEN_AI_RESPONSE_MODEL,
  SVC_ATTEMPT_CONTINUATION,
  SVC_ATTEMPT_OUTCOME,
  SVC_HOLD_OUTCOME,
} from './attributes.js';
import type { ChargedCompletion, Telemetry } from './telemetry.js';

/** Content attributes (opt-in) are cut here: spans are not a store for whole conversations. */
const CONTENT_LIMIT = 16 * 1024;

/** What the access line and the root span report of a completion, once its hold ended. */
export interface CompletionFacts extends ChargedCompletion {
  attempts: number;
  ending: string;
  holdId: string;
  /** The hold's ending is still being retried in the background (the ledger was unreachable). */
  settlementPending: boolean;
}

/** The outcome failover records for an attempt that failed this way (src/routing/failover.ts). */
export function attemptOutcome(e: unknown): string {
  if (!(e instanceof UpstreamError)) return 'protocol';
  return e.kind === 'http' ? `http_${e.status ?? 'error'}` : e.kind;
}

export class RequestObservation {
  readonly startedAt = performance.now();
  /** The request's span and its context, parents of the child spans; null when tracing is off. */
  span: Span | null = null;
  context: Context = ROOT_CONTEXT;
  alias = '';
  completion: CompletionFacts | null = null;
  /** Time spent waiting on upstreams (opening calls and awaiting their events), summed over attempts. */
  upstreamMs = 0;
  private firstTokenSeen = false;
  /** Resolves once the completion's hold ended; null for a request without a completion. */
  ended: Promise<void> | null = null;
  private resolveEnded: (() => void) | null = null;

  constructor(
    readonly telemetry: Telemetry,
    readonly logger: Logger,
    readonly door: string,
    readonly requestId: string,
  ) {}

  /** The credit hold's reservation, in its span; a refusal (402, 401) is counted by its reason. */
  reserve<T>(alias: string, run: () => Promise<T>): Promise<T> {
    this.alias = alias;
    const span = this.startSpan('svc.reserve');
    const refused = (e: unknown): never => {
      if (e instanceof GatewayError && e.status < 500) this.telemetry.holdRefused(e.code);
      span?.setStatus({ code: SpanStatusCode.ERROR, message: e instanceof Error ? e.message : String(e) });
      span?.end();
      throw e;
    };
    // `then` on the call, not an async function around an await: this is on every request's path.
    return started(run).then((value) => {
      span?.end();
      return value;
    }, refused);
  }

  /**
   * The hold's ending (settle or void), in its span: counted, and remembered for the access line. A failure
   * here comes after the answer may have been delivered, so it is logged with the hold id.
   */
  settle(holdId: string, attempts: readonly { continuation?: boolean }[], run: () => Promise<Settlement>): Promise<Settlement> {
    const span = this.startSpan('svc.settle');
    const failed = (e: unknown): never => {
      this.logger.warn('hold ending failed after the completion', { requestId: this.requestId, holdId, error: String(e) });
      span?.setStatus({ code: SpanStatusCode.ERROR, message: String(e) });
      this.completionEnded(null);
      span?.end();
      throw e;
    };
    return started(run).then((s) => {
      // A throw while counting (a bug) still ends the request's observation, as the failure path does.
      try {
        const provider = s.target?.adapter.name ?? 'none';
        const model = s.target?.model ?? 'none';
        const settled = s.charge.kind === 'settle';
        const credits = s.outcome?.charged ?? (s.charge.kind === 'settle' ? s.charge.credits : 0);
        let continuations = 0;
        for (const a of attempts) if (a.continuation === true) continuations++;
        const facts: CompletionFacts = {
          alias: this.alias,
          provider,
          model,
          promptTokens: s.promptTokens,
          completionTokens: s.completionTokens,
          credits,
          attempts: attempts.length,
          ending: s.ending,
          holdId,
          settlementPending: s.outcome === null,
        };
        this.countHold(facts, { voided: !settled, shortfallCredits: s.charge.kind === 'settle' ? s.charge.shortfallCredits : 0, continuations });
        span?.setAttribute(SVC_HOLD_OUTCOME, settled ? 'settled' : 'voided');
        this.completionEnded(facts);
        span?.end();
        return s;
      } catch (e) {
        return failed(e);
      }
    }, failed);
  }

  /**
   * A hold ended by an owner other than a completion (an embeddings request): counted like a completion's,
   * and kept for the access line.
   */
  holdEnded(facts: CompletionFacts, settled: { voided: boolean; shortfallCredits: number }): void {
    this.alias = facts.alias;
    this.countHold(facts, { ...settled, continuations: 0 });
    this.completion = facts;
  }

  private countHold(facts: CompletionFacts, settled: { voided: boolean; shortfallCredits: number; continuations: number }): void {
    this.telemetry.holdEnded({
      alias: facts.alias,
      provider: facts.provider,
      model: facts.model,
      promptTokens: facts.promptTokens,
      completionTokens: facts.completionTokens,
      credits: facts.credits,
      voided: settled.voided,
      shortfallCredits: settled.shortfallCredits,
      failovers: Math.max(0, facts.attempts - 1),
      continuations: settled.continuations,
    });
    if (facts.settlementPending) this.telemetry.settleDeferred();
  }

  /** A child span of the request's (null when tracing is off); the caller ends it. */
  startSpan(name: string, kind: SpanKind = SpanKind.INTERNAL): Span | null {
    const tracing = this.telemetry.tracing;
    if (tracing === null || this.span === null) return null;
    return tracing.tracer.startSpan(name, { kind }, this.context);
  }

  /**
   * The completion began (its hold is reserved): from here the request ends when the hold ends, which for a
   * stream is after its response began. Returns the targets to call, observed.
   */
  attach(alias: string, targets: readonly Target[]): readonly Target[] {
    this.alias = alias;
    this.ended = new Promise<void>((resolve) => (this.resolveEnded = resolve));
    return targets.map((t) => ({ ...t, adapter: this.observedAdapter(t.adapter) }));
  }

  private completionEnded(facts: CompletionFacts | null): void {
    this.completion = facts;
    this.resolveEnded?.();
  }

  private observedAdapter(adapter: ProviderAdapter): ProviderAdapter {
    return {
      name: adapter.name,
      protocol: adapter.protocol,
      paid: adapter.paid,
      complete: (call) => this.observeComplete(adapter, call),
      stream: (call) => this.observeStream(adapter, call),
    };
  }

  private attemptSpan(adapter: ProviderAdapter, call: UpstreamCall): Span | null {
    const span = this.startSpan(`chat ${call.model}`, SpanKind.CLIENT);
    span?.setAttributes({
      [GEN_AI_OPERATION_NAME]: 'chat',
      [GEN_AI_PROVIDER_NAME]: adapter.name,
      [GEN_AI_REQUEST_MODEL]: call.model,
      [GEN_AI_REQUEST_MAX_TOKENS]: call.request.max_tokens,
      [SVC_ATTEMPT_CONTINUATION]: call.continuation !== undefined,
    });
    // Prompt text only when the operator opted in (SVC_TRACE_CONTENT), and bounded.
    if (span !== null && this.telemetry.tracing?.recordContent === true) {
      span.setAttribute(GEN_AI_INPUT_MESSAGES, JSON.stringify(call.request.messages).slice(0, CONTENT_LIMIT));
    }
    return span;
  }

  private endAttempt(adapter: ProviderAdapter, model: string, span: Span | null, startedAt: number, outcome: string, error: unknown): void {
    this.telemetry.attemptEnded(adapter.name, model, outcome, (performance.now() - startedAt) / 1000);
    if (span === null) return;
    span.setAttribute(SVC_ATTEMPT_OUTCOME, outcome);
    if (outcome !== 'ok') {
      span.setAttribute('error.type', outcome);
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : outcome });
    }
    span.end();
  }

  private firstToken(): void {
    if (this.firstTokenSeen) return;
    this.firstTokenSeen = true;
    this.telemetry.firstToken(this.alias, (performance.now() - this.startedAt) / 1000);
  }

  /** Runs the upstream call inside the attempt's span, so the runtime's fetch can send its `traceparent`. */
  private within<T>(span: Span | null, call: () => Promise<T>): Promise<T> {
    return span === null ? call() : otelContext.with(trace.setSpan(this.context, span), call);
  }

  private async observeComplete(adapter: ProviderAdapter, call: UpstreamCall): Promise<UpstreamCompletion> {
    const startedAt = performance.now();
    const span = this.attemptSpan(adapter, call);
    try {
      const answer = await this.within(span, () => adapter.complete(call));
      this.upstreamMs += performance.now() - startedAt;
      this.firstToken();
      if (answer.model !== null) span?.setAttribute(GEN_AI_RESPONSE_MODEL, answer.model);
      if (span !== null && this.telemetry.tracing?.recordContent === true) {
        span.setAttribute(GEN_AI_OUTPUT_MESSAGES, JSON.stringify([answer.message]).slice(0, CONTENT_LIMIT));
      }
      this.endAttempt(adapter, call.model, span, startedAt, 'ok', null);
      return answer;
    } catch (e) {
      this.upstreamMs += performance.now() - startedAt;
      this.endAttempt(adapter, call.model, span, startedAt, attemptOutcome(e), e);
      throw e;
    }
  }

  private async observeStream(adapter: ProviderAdapter, call: UpstreamCall): Promise<EventBatches> {
    const startedAt = performance.now();
    const span = this.attemptSpan(adapter, call);
    let events: EventBatches;
    try {
      events = await this.within(span, () => adapter.stream(call));
    } catch (e) {
      this.upstreamMs += performance.now() - startedAt;
      this.endAttempt(adapter, call.model, span, startedAt, attemptOutcome(e), e);
      throw e;
    }
    this.upstreamMs += performance.now() - startedAt;
    let open = true;
    let modelSeen = false;
    const end = (outcome: string, error: unknown): void => {
      if (!open) return;
      open = false;
      this.endAttempt(adapter, call.model, span, startedAt, outcome, error);
    };
    // Told by failover of each read (AttemptWatch), not wrapped around them.
    const watch: AttemptWatch = {
      // The wait is counted even once the attempt ended: a read the request stopped waiting for still waited.
      read: (waitedMs, batch) => {
        this.upstreamMs += waitedMs;
        if (!open) return;
        if (batch === null) {
          end('ok', null);
          return;
        }
        for (const ev of batch) {
          if (ev.type === 'delta') this.firstToken();
          const model = ev.meta?.model;
          if (model !== undefined && !modelSeen) {
            modelSeen = true;
            span?.setAttribute(GEN_AI_RESPONSE_MODEL, model);
          }
        }
      },
      failed: (waitedMs, error) => {
        this.upstreamMs += waitedMs;
        end(attemptOutcome(error), error);
      },
      closed: () => end('aborted', null),
    };
    const watched: WatchedBatches = { [Symbol.asyncIterator]: () => events[Symbol.asyncIterator](), watch };
    return watched;
  }
}

/** `run()`'s promise, with a synchronous throw as its rejection. */
function started<T>(run: () => Promise<T>): Promise<T> {
  try {
    return run();
  } catch (e) {
    return Promise.reject(e);
  }
}
