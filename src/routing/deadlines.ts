/**
 * The deadlines of one upstream attempt, enforced through the stop signal the adapter already honours (a
 * StopSignal, ../core/stop-signal.ts: an AbortSignal's interface at a fraction of its cost): when one
 * passes, the signal fires with an UpstreamError('timeout') naming it, the adapter's upstream call or stream
 * read rejects with that error, and failover moves on.
 *
 * - connect: until the upstream accepts the call (answers with a status and headers);
 * - first token: from the start of the attempt until its first event;
 * - between chunks: the longest silence after that, counted only while the caller waits for the next event:
 *   a client that reads slowly pauses the caller, and its slowness is not the upstream's stall (it must not
 *   fail the attempt nor count against the target's circuit breaker);
 * - total: the whole attempt; the request's own deadline (across attempts) caps it too. When one of these
 *   passes while the caller is not waiting on the upstream, the request ran out of time on the client's
 *   side: the attempt is aborted as `aborted`, which blames no target.
 *
 * Instants are `performance.now()`: a step of the machine's wall clock must not fire (or hold back) a deadline.
 *
 * One timer per attempt, re-armed only when the phase changes: an event on a healthy stream costs one clock
 * read, not a clearTimeout/setTimeout pair.
 */
import { type Deadline, deadlineIn } from '../core/deadline-timers.js';
import { StopSignal, type StopSignalLike } from '../core/stop-signal.js';
import { UpstreamError } from '../providers/contract.js';

export interface Deadlines {
  connectMs: number;
  firstTokenMs: number;
  betweenChunksMs: number;
  totalMs: number;
}

export const DEFAULT_DEADLINES: Deadlines = {
  connectMs: 10_000,
  // Reasoning models may think for a long while before their first token.
  firstTokenMs: 60_000,
  betweenChunksMs: 30_000,
  totalMs: 600_000,
};

type Phase = 'connect' | 'first_token' | 'streaming' | 'done';
/** Which deadline is next: the phase's own, the attempt's total, or the request's. */
type Bound = 'phase' | 'total' | 'request';

export class AttemptDeadlines {
  /** Fires when the attempt must end (client gone, a deadline passed, failover closing it): its call's signal. */
  readonly stop = new StopSignal();
  private phase: Phase = 'connect';
  private readonly startedAt = performance.now();
  private lastEventAt = this.startedAt;
  private firstEventAt: number | null = null;
  /** Whether the caller is waiting for the next event (between chunks); false while it relays one. */
  private awaited = true;
  private timer: Deadline | null = null;
  /** When the pending timer fires. */
  private timerAt = Number.POSITIVE_INFINITY;
  /** Set by nextAt(): which bound the instant it returned belongs to (no object per call). */
  private nextBound: Bound = 'phase';
  private readonly onTimer = (): void => this.check();
  private readonly onParentAbort = (): void => {
    this.stop.abort(new UpstreamError('aborted', 'the client closed the connection'));
  };

  constructor(
    private readonly deadlines: Deadlines,
    /** The signal above the attempt: the completion's. */
    private readonly parent: StopSignalLike,
    /** `performance.now()` instant after which the whole request gives up, whatever this attempt's own deadlines say. */
    private readonly requestDeadlineAt: number,
    /** A one-piece call: its first token arrives with its last, so the first-token deadline bounds it all. */
    oneShot = false,
  ) {
    if (oneShot) this.phase = 'first_token';
    if (parent.aborted) this.onParentAbort();
    else parent.addEventListener('abort', this.onParentAbort, { once: true });
    this.arm();
  }

  get signal(): StopSignalLike {
    return this.stop;
  }

  /** Milliseconds from the start of the attempt to its first event, once there was one. */
  get firstTokenMs(): number | null {
    return this.firstEventAt === null ? null : this.firstEventAt - this.startedAt;
  }

  /** The upstream accepted the call. */
  accepted(): void {
    if (this.phase !== 'connect') return;
    this.phase = 'first_token';
    this.arm();
  }

  /** The caller asks for the next event: from now on, silence is the upstream's. */
  waiting(): void {
    if (this.awaited) return;
    this.awaited = true;
    this.lastEventAt = performance.now();
    // A timer due no later than the new deadline re-reads it when it fires: no timer churn on a healthy stream.
    if (this.phase === 'streaming' && (this.timer === null || this.timerAt > this.lastEventAt + this.deadlines.betweenChunksMs)) this.arm();
  }

  /** An event arrived. */
  event(): void {
    const now = performance.now();
    this.lastEventAt = now;
    this.awaited = false;
    if (this.phase === 'first_token' || this.phase === 'connect') {
      this.firstEventAt = now;
      this.phase = 'streaming';
      // The between-chunks deadline may be shorter than what remained of the first-token one.
      this.arm();
    }
  }

  /** The attempt is over (finished, failed or abandoned): stop the timer and forget the parent. */
  done(): void {
    this.phase = 'done';
    this.timer?.cancel();
    this.timer = null;
    this.timerAt = Number.POSITIVE_INFINITY;
    this.parent.removeEventListener('abort', this.onParentAbort);
  }

  private nextAt(): number {
    const d = this.deadlines;
    let at: number;
    if (this.phase === 'connect') at = this.startedAt + d.connectMs;
    else if (this.phase === 'first_token') at = this.startedAt + d.firstTokenMs;
    else if (this.awaited) at = this.lastEventAt + d.betweenChunksMs;
    else at = Number.POSITIVE_INFINITY;
    let bound: Bound = 'phase';
    const total = this.startedAt + d.totalMs;
    if (total < at) {
      at = total;
      bound = 'total';
    }
    if (this.requestDeadlineAt < at) {
      at = this.requestDeadlineAt;
      bound = 'request';
    }
    this.nextBound = bound;
    return at;
  }

  /** What the deadline nextAt() last chose says, built only when it fires. */
  private describe(): string {
    const d = this.deadlines;
    if (this.nextBound === 'request') return 'the request exceeded its deadline';
    if (this.nextBound === 'total') return `the attempt exceeded its total deadline of ${d.totalMs} ms`;
    if (this.phase === 'connect') return `the upstream did not accept the call within ${d.connectMs} ms`;
    if (this.phase === 'first_token') return `no first token within ${d.firstTokenMs} ms`;
    return `the stream stalled for ${d.betweenChunksMs} ms`;
  }

  private arm(): void {
    this.timer?.cancel();
    this.timer = null;
    if (this.phase === 'done' || this.stop.aborted) return;
    const at = this.nextAt();
    this.timerAt = at;
    if (at !== Number.POSITIVE_INFINITY) this.timer = deadlineIn(at - performance.now(), this.onTimer);
  }

  private check(): void {
    this.timer = null;
    if (this.phase === 'done') return;
    const at = this.nextAt();
    if (performance.now() >= at) {
      const blameless = this.phase === 'streaming' && !this.awaited;
      this.stop.abort(new UpstreamError(blameless ? 'aborted' : 'timeout', this.describe()));
      return;
    }
    // Events moved the deadline on since the timer was set; none is due while the caller relays an event.
    this.timerAt = at;
    if (at !== Number.POSITIVE_INFINITY) this.timer = deadlineIn(at - performance.now(), this.onTimer);
  }
}
