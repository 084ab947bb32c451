/**
 * One answer, served by as many upstream attempts as it takes. Targets are tried in their configured order,
 * skipping those whose circuit breaker is open (they are tried last, rather than failing a request that
 * never tried them). Each attempt runs under its deadlines (./deadlines.ts).
 *
 * - An attempt that fails before it produced anything (connection error, 5xx, 429, malformed answer, no
 *   first token in time): the next target answers instead. The caller never sees the failure.
 * - An attempt that fails after it produced part of the answer (a stall or a cut):
 *   - `continue` (a streaming client already holds that part): the next target is asked to continue from
 *     the partial text, and its new text follows in the same stream;
 *   - `restart` (a non-streaming client has seen nothing yet): a `restart` event tells the caller to drop
 *     what it gathered, and the next target answers from the start, so the answer comes from one model.
 *   A partial tool call cannot be continued by another model: in `continue` mode it ends the answer.
 * - A failure that every target would share (the upstream judged the request malformed: 400, 413, 422),
 *   or our own abort (client gone), ends at once. A 400 about this target only (a parameter or value this
 *   model does not take: `unsupported_parameter`, "does not support") is not one: the next target is tried.
 *
 * Every failure is kept (AllTargetsFailed.failures), so the answer can name the one that decided it (a
 * 429 with its Retry-After, src/completions/upstream-errors.ts).
 *
 * When nothing is left to try, `open` and `next` throw AllTargetsFailed.
 */
import type { Delivery } from '../completions/delivery.js';
import type { ChatRequest } from '../openai/chat-types.js';
import { completionAsEvents } from '../providers/completion-events.js';
import { UpstreamError, type AttemptWatch, type StreamEvent, type WatchedBatches } from '../providers/contract.js';
import type { StopSignalLike } from '../core/stop-signal.js';
import { maxTokensFor } from '../providers/target-params.js';
import { OutputBound } from '../providers/upstream-output-bound.js';
import { detailOf } from '../providers/upstream-failures.js';
import { AttemptDeadlines } from './deadlines.js';
import type { Target } from './router.js';

export interface Attempt {
  provider: string;
  model: string;
  outcome: string;
  /** True when this attempt continued a partial answer of an earlier one. */
  continuation?: boolean;
}

export class AllTargetsFailed extends Error {
  constructor(
    readonly last: UpstreamError,
    readonly attempts: Attempt[],
    /** Every attempt's failure, in order; `last` is the final one. */
    readonly failures: readonly UpstreamError[] = [last],
  ) {
    super(last.message);
    this.name = 'AllTargetsFailed';
  }
}

export type FailoverEvent = StreamEvent | { type: 'restart' };

/** The events of a step of the answer: a batch of the serving attempt's events, or a restart alone. */
export type FailoverBatch = readonly FailoverEvent[];

const RESTART: FailoverBatch = [{ type: 'restart' }];

export interface FailoverOptions {
  targets: readonly Target[];
  /** `max_tokens` is the bound of the whole answer, across attempts. */
  request: ChatRequest & { max_tokens: number };
  clientSignal: StopSignalLike;
  /** `performance.now()` instant after which no attempt may run (monotonic: a wall-clock step moves no deadline). */
  requestDeadlineAt: number;
  afterPartial: 'continue' | 'restart';
  /** Estimates the tokens of delivered text, to bound a continuation's output. */
  countTokens: (text: string) => number;
  /** The completion's record of what was produced: kept up to date here, as events pass. */
  delivery: Delivery;
}

interface Live {
  target: Target;
  deadlines: AttemptDeadlines;
  events: AsyncIterator<readonly StreamEvent[]>;
  continuation: boolean;
  /** The attempt's output bound, checked on each batch read here (../providers/upstream-output-bound.ts). */
  bound: OutputBound;
  /** What observes the attempt, told of each read here; null when the request is not observed. */
  watch: AttemptWatch | null;
}

/**
 * The upstream judged the request itself malformed: every target would say the same. A refusal marked
 * retryable is about this target only (see UpstreamErrorDetail.targetSpecific).
 */
/** A refusal of the request itself, which every target would share: failover stops. */
export function requestRefused(e: UpstreamError): boolean {
  return e.kind === 'http' && !e.retryable && (e.status === 400 || e.status === 413 || e.status === 422);
}

/** This target cannot serve this request, which says nothing of its health. */
export function cannotServe(e: UpstreamError): boolean {
  return e.kind === 'unsupported' || detailOf(e).targetSpecific;
}

export function asUpstreamError(e: unknown): UpstreamError {
  if (e instanceof UpstreamError) return e;
  return new UpstreamError('protocol', e instanceof Error ? e.message : String(e));
}

function outcomeOf(e: UpstreamError): string {
  return e.kind === 'http' ? `http_${e.status ?? 'error'}` : e.kind;
}

export class FailoverStream implements AsyncIterator<FailoverBatch> {
  readonly attempts: Attempt[] = [];
  private readonly failures: UpstreamError[] = [];
  private readonly skipped: Target[] = [];
  private nextIndex = 0;
  private live: Live | null = null;
  private lastTarget: Target | null = null;
  private finished = false;

  constructor(private readonly options: FailoverOptions) {}

  /** Resolves once a target accepted the call; throws AllTargetsFailed when none did. */
  async open(): Promise<void> {
    await this.startNext(null);
  }

  /** The target serving (or, once finished, that served) the answer's end; null before any was tried. */
  get target(): Target | null {
    return this.live?.target ?? this.lastTarget;
  }

  async next(): Promise<IteratorResult<FailoverBatch>> {
    for (;;) {
      const live = this.live;
      if (live === null) return { done: true, value: undefined };
      let result: IteratorResult<readonly StreamEvent[]>;
      // The between-chunks deadline measures the upstream while the caller waits on it, never the time the
      // caller (a slow client) took before asking for more.
      live.deadlines.waiting();
      const waitFrom = live.watch === null ? 0 : performance.now();
      try {
        // The attempt went past its output bound in its last batch: it ends here, as a read that failed.
        if (live.bound.overrun !== null) await this.endOverrun(live, live.bound.overrun);
        result = await live.events.next();
      } catch (raw) {
        // (The output bound's error was told as it was found, with no wait.)
        if (raw !== live.bound.overrun) live.watch?.failed(performance.now() - waitFrom, raw);
        // return() closed this attempt meanwhile (the client went away): nothing more to read.
        if (this.live !== live) return { done: true, value: undefined };
        // The answer had finished (its finish reason arrived): an upstream cut before its end of stream
        // loses nothing the client needs, and continuing it on another target would add to a whole answer.
        // (Our own abort, the client gone or a shutdown, still ends it as such.)
        if (this.options.delivery.attemptFinished && asUpstreamError(raw).kind !== 'aborted') {
          this.succeed(live);
          return { done: true, value: undefined };
        }
        const failed = await this.fail(live, asUpstreamError(raw));
        if (failed !== null) return { done: false, value: failed };
        continue;
      }
      if (result.done) {
        live.watch?.read(performance.now() - waitFrom, null);
        this.succeed(live);
        return { done: true, value: undefined };
      }
      live.deadlines.event();
      // The watch hears the whole batch (the first token, the model): the upstream did send it.
      live.watch?.read(performance.now() - waitFrom, result.value);
      const batch = live.bound.check(result.value);
      // Past the bound at its first event: nothing of it is delivered, and the next turn ends the attempt.
      if (batch.length === 0) continue;
      const { delivery } = this.options;
      for (const ev of batch) {
        if (ev.type === 'delta') delivery.produce(ev.delta, ev.finishReason);
        else delivery.reportUsage(ev.usage);
      }
      return batch === result.value ? result : { done: false, value: batch };
    }
  }

  /** The caller gives up (client gone): close the live attempt without blaming its target. */
  async return(): Promise<IteratorResult<FailoverBatch>> {
    await this.close('client_closed');
    return { done: true, value: undefined };
  }

  /** Closes the live attempt, if any, without blaming its target; `outcome` is recorded as its attempt's. */
  async close(outcome: string): Promise<void> {
    const live = this.live;
    this.live = null;
    if (live !== null && !this.finished) {
      this.lastTarget = live.target;
      live.watch?.closed();
      live.deadlines.stop.abort(new UpstreamError('aborted', `the request ended (${outcome})`));
      live.deadlines.done();
      live.target.health.release();
      this.attempts.push(this.record(live, outcome));
      await live.events.return?.().catch(() => undefined);
    }
  }

  private succeed(live: Live): void {
    this.finished = true;
    live.deadlines.done();
    live.target.health.success(live.deadlines.firstTokenMs);
    this.attempts.push(this.record(live, 'ok'));
    this.lastTarget = live.target;
    this.live = null;
  }

  /**
   * Closes an attempt that went past its output bound (its watch told first, its upstream released), and
   * throws the bound's error as its read would have: the caller's handling of a failed read follows.
   */
  private async endOverrun(live: Live, e: UpstreamError): Promise<never> {
    live.watch?.failed(0, e);
    await live.events.return?.().catch(() => undefined);
    throw e;
  }

  /** Handles a failed live attempt; returns a batch for the caller, or null to keep reading. */
  private async fail(live: Live, e: UpstreamError): Promise<FailoverBatch | null> {
    live.deadlines.done();
    this.lastTarget = live.target;
    this.live = null;
    await live.events.return?.().catch(() => undefined);
    this.attempts.push(this.record(live, outcomeOf(e)));
    this.failures.push(e);
    if (e.kind === 'aborted' || requestRefused(e)) {
      live.target.health.release();
      throw this.allFailed(e);
    }
    if (cannotServe(e)) live.target.health.release();
    else live.target.health.failure();

    const { delivery } = this.options;
    if (!delivery.attemptProduced) {
      delivery.restart();
      await this.startNext(e);
      return null;
    }
    if (this.options.afterPartial === 'restart') {
      // Until the next target accepts, the failed attempt's output is what the upstreams produced.
      await this.startNext(e);
      delivery.restart();
      return RESTART;
    }
    if (delivery.attemptProducedToolCall) throw this.allFailed(e);
    delivery.splice();
    await this.startNext(e);
    return null;
  }

  /** Starts the next admissible target, continuing `priorText` if there is any; throws when none is left. */
  private async startNext(lastError: UpstreamError | null): Promise<void> {
    let last = lastError;
    for (;;) {
      const candidate = this.nextCandidate();
      if (candidate === null) {
        throw this.allFailed(last ?? new UpstreamError('connect', 'no upstream target is configured'));
      }
      const target = candidate;
      try {
        await this.start(target);
        return;
      } catch (raw) {
        const e = asUpstreamError(raw);
        last = e;
        this.attempts.push({
          provider: target.adapter.name,
          model: target.model,
          outcome: outcomeOf(e),
          ...(this.options.delivery.continuedText ? { continuation: true } : {}),
        });
        this.lastTarget = target;
        this.failures.push(e);
        if (e.kind === 'aborted' || requestRefused(e)) {
          target.health.release();
          throw this.allFailed(e);
        }
        // A target that cannot express or take the request is not unhealthy; one that can may still answer.
        if (cannotServe(e)) target.health.release();
        else target.health.failure();
      }
    }
  }

  private allFailed(last: UpstreamError): AllTargetsFailed {
    return new AllTargetsFailed(last, this.attempts, this.failures.length > 0 ? [...this.failures] : [last]);
  }

  private nextCandidate(): Target | null {
    const { targets, requestDeadlineAt } = this.options;
    if (performance.now() >= requestDeadlineAt) return null;
    while (this.nextIndex < targets.length) {
      const target = targets[this.nextIndex++] as Target;
      if (target.health.admit() !== 'skip') return target;
      this.skipped.push(target);
    }
    // Every admissible target failed: an open breaker is a guess, a request that tried nothing is a certainty.
    return this.skipped.shift() ?? null;
  }

  private async start(target: Target): Promise<void> {
    const { request, clientSignal, requestDeadlineAt, countTokens, delivery } = this.options;
    const deadlines = new AttemptDeadlines(target.deadlines, clientSignal, requestDeadlineAt, target.oneShot);
    const partial = delivery.continuedText;
    const continuation = partial.length > 0;
    const call = continuation
      ? {
          request: { ...request, max_tokens: Math.max(1, request.max_tokens - countTokens(partial)) },
          model: target.model,
          signal: deadlines.signal,
          continuation: { partial },
        }
      : { request, model: target.model, signal: deadlines.signal };
    let events: WatchedBatches;
    try {
      events = target.oneShot ? completionAsEvents(await target.adapter.complete(call)) : await target.adapter.stream(call);
    } catch (e) {
      deadlines.done();
      throw e;
    }
    deadlines.accepted();
    delivery.accept();
    this.live = {
      target,
      deadlines,
      events: events[Symbol.asyncIterator](),
      continuation,
      watch: events.watch ?? null,
      // The bound of what this target is asked for (the model's output limit may lower the request's).
      bound: new OutputBound(maxTokensFor(target.params, call.request.max_tokens)),
    };
  }

  private record(live: Live, outcome: string): Attempt {
    return {
      provider: live.target.adapter.name,
      model: live.target.model,
      outcome,
      ...(live.continuation ? { continuation: true } : {}),
    };
  }
}
