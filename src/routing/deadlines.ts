/**
 * The deadlines of one upstream attempt, enforced through the AbortSignal the adapter already honours: when
 * one passes, the signal fires with an UpstreamError('timeout') naming it, the adapter's fetch or stream read
 * rejects with that error, and failover moves on.
 *
 * - connect: until the upstream accepts the call (answers with a status and headers);
 * - first token: from the start of the attempt until its first event;
 * - between chunks: the longest silence after that;
 * - total: the whole attempt; the request's own deadline (across attempts) caps it too.
 *
 * One timer per attempt, re-armed only when the phase changes: an event on a healthy stream costs one clock
 * read, not a clearTimeout/setTimeout pair.
 */
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

export class AttemptDeadlines {
  readonly controller = new AbortController();
  private phase: Phase = 'connect';
  private readonly startedAt = Date.now();
  private lastEventAt = this.startedAt;
  private firstEventAt: number | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private readonly onParentAbort = (): void => {
    this.controller.abort(new UpstreamError('aborted', 'the client closed the connection'));
  };

  constructor(
    private readonly deadlines: Deadlines,
    private readonly parent: AbortSignal,
    /** Epoch ms after which the whole request gives up, whatever this attempt's own deadlines say. */
    private readonly requestDeadlineAt: number,
    /** A one-piece call: its first token arrives with its last, so the first-token deadline bounds it all. */
    oneShot = false,
  ) {
    if (oneShot) this.phase = 'first_token';
    if (parent.aborted) this.onParentAbort();
    else parent.addEventListener('abort', this.onParentAbort, { once: true });
    this.arm();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
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

  /** An event arrived. */
  event(): void {
    const now = Date.now();
    this.lastEventAt = now;
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
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.parent.removeEventListener('abort', this.onParentAbort);
  }

  private nextDeadline(): { at: number; what: string } {
    const d = this.deadlines;
    let phase: { at: number; what: string };
    if (this.phase === 'connect') phase = { at: this.startedAt + d.connectMs, what: `the upstream did not accept the call within ${d.connectMs} ms` };
    else if (this.phase === 'first_token') phase = { at: this.startedAt + d.firstTokenMs, what: `no first token within ${d.firstTokenMs} ms` };
    else phase = { at: this.lastEventAt + d.betweenChunksMs, what: `the stream stalled for ${d.betweenChunksMs} ms` };
    const total = { at: this.startedAt + d.totalMs, what: `the attempt exceeded its total deadline of ${d.totalMs} ms` };
    const request = { at: this.requestDeadlineAt, what: 'the request exceeded its deadline' };
    let next = phase;
    if (total.at < next.at) next = total;
    if (request.at < next.at) next = request;
    return next;
  }

  private arm(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (this.phase === 'done' || this.controller.signal.aborted) return;
    const { at } = this.nextDeadline();
    this.timer = setTimeout(() => this.check(), Math.max(0, at - Date.now()));
  }

  private check(): void {
    this.timer = null;
    if (this.phase === 'done') return;
    const next = this.nextDeadline();
    if (Date.now() >= next.at) {
      this.controller.abort(new UpstreamError('timeout', next.what));
      return;
    }
    // Events moved the deadline on since the timer was set.
    this.timer = setTimeout(() => this.check(), next.at - Date.now());
  }
}
