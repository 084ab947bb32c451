/**
 * Every deadline of a process in one binary min-heap by due instant, behind one runtime timer set for the
 * earliest. Scheduling is a push (no timer object, no list of Node's own per duration); cancelling marks the
 * entry, which is dropped when it reaches the top or when cancelled entries outnumber the live ones (so
 * deadlines set far ahead and cancelled at once, the usual case, do not pile up). When nothing live is left
 * the heap is emptied and the timer cleared.
 *
 * Instants are `performance.now()`, like the deadlines themselves: a step of the wall clock moves nothing.
 * A deadline fires no earlier than asked; the runtime timer may wake a millisecond early, and then it is
 * set again for what is left.
 */
import type { Deadline, DeadlineOptions, ScheduleDeadline } from './deadline-timers.js';

const PENDING = 0;
const DONE = 1;

class Entry implements Deadline {
  state = PENDING;

  constructor(
    private readonly heap: DeadlineHeap,
    readonly at: number,
    /** Order of scheduling: deadlines due at the same instant fire in that order. */
    readonly seq: number,
    readonly fire: () => void,
    readonly keepAlive: boolean,
  ) {}

  cancel(): void {
    if (this.state !== PENDING) return;
    this.state = DONE;
    this.heap.cancelled(this);
  }
}

function before(a: Entry, b: Entry): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

/** Cancelled entries are swept once there are more of them than this and than live ones. */
const SWEEP_AT = 64;

export class DeadlineHeap {
  private entries: Entry[] = [];
  /** Cancelled entries still in `entries`. */
  private cancelledCount = 0;
  /** Live entries that keep the process alive. */
  private keepAliveCount = 0;
  private seq = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private timerAt = Number.POSITIVE_INFINITY;
  private timerKeepsAlive = true;
  /** While due deadlines fire: what they schedule is armed once, after. */
  private running = false;

  /** The ScheduleDeadline of this heap, to hand to useDeadlineScheduler. */
  readonly schedule: ScheduleDeadline = (ms: number, fire: () => void, options?: DeadlineOptions): Deadline => {
    const keepAlive = options?.keepAlive !== false;
    const entry = new Entry(this, performance.now() + Math.max(0, ms), this.seq++, fire, keepAlive);
    this.push(entry);
    if (keepAlive) this.keepAliveCount += 1;
    if (this.running) return entry;
    if (entry.at < this.timerAt) this.arm(entry.at);
    else this.refTimer();
    return entry;
  };

  /** Deadlines scheduled and neither fired nor cancelled. */
  get pending(): number {
    return this.entries.length - this.cancelledCount;
  }

  /** Entries held, cancelled ones not yet dropped included: what the sweep bounds. */
  get stored(): number {
    return this.entries.length;
  }

  /** @internal Called by an entry when it is cancelled. */
  cancelled(entry: Entry): void {
    this.cancelledCount += 1;
    if (entry.keepAlive) this.keepAliveCount -= 1;
    if (this.running) return;
    if (this.cancelledCount === this.entries.length) {
      // Nothing live: forget them all and stop the timer.
      this.entries = [];
      this.cancelledCount = 0;
      this.disarm();
      return;
    }
    if (this.cancelledCount > SWEEP_AT && this.cancelledCount * 2 > this.entries.length) this.sweep();
    else this.refTimer();
  }

  private readonly onTimer = (): void => {
    this.timer = null;
    this.timerAt = Number.POSITIVE_INFINITY;
    this.running = true;
    const now = performance.now();
    // this.entries, not a local: a deadline's action may cancel others, which can replace the array.
    while (this.entries.length > 0) {
      const top = this.entries[0] as Entry;
      if (top.state === PENDING && top.at > now) break;
      this.pop();
      if (top.state !== PENDING) {
        this.cancelledCount -= 1;
        continue;
      }
      top.state = DONE;
      if (top.keepAlive) this.keepAliveCount -= 1;
      // A deadline's action must not stop the others that are due.
      try {
        top.fire();
      } catch (error) {
        queueMicrotask(() => {
          throw error;
        });
      }
    }
    this.running = false;
    this.dropCancelledTop();
    const next = this.entries[0];
    if (next === undefined) this.disarm();
    else this.arm(next.at);
  };

  private arm(at: number): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(this.onTimer, Math.max(1, Math.ceil(at - performance.now())));
    this.timerKeepsAlive = true;
    this.refTimer();
  }

  private disarm(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.timerAt = Number.POSITIVE_INFINITY;
  }

  /** The one timer keeps the process alive only while a live deadline asks it to. */
  private refTimer(): void {
    const timer = this.timer;
    if (timer === null || typeof timer !== 'object' || !('unref' in timer)) return;
    const keep = this.keepAliveCount > 0;
    if (keep === this.timerKeepsAlive) return;
    this.timerKeepsAlive = keep;
    if (keep) timer.ref();
    else timer.unref();
  }

  private dropCancelledTop(): void {
    while (this.entries.length > 0 && (this.entries[0] as Entry).state !== PENDING) {
      this.pop();
      this.cancelledCount -= 1;
    }
  }

  private sweep(): void {
    const live = this.entries.filter((e) => e.state === PENDING);
    this.entries = live;
    this.cancelledCount = 0;
    for (let i = (live.length >> 1) - 1; i >= 0; i--) this.down(i);
    const next = live[0];
    if (next === undefined) this.disarm();
    else if (next.at !== this.timerAt) this.arm(next.at);
    else this.refTimer();
  }

  private push(entry: Entry): void {
    const entries = this.entries;
    let i = entries.length;
    entries.push(entry);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = entries[parent] as Entry;
      if (!before(entry, p)) break;
      entries[i] = p;
      i = parent;
    }
    entries[i] = entry;
  }

  private pop(): void {
    const entries = this.entries;
    const last = entries.pop() as Entry;
    if (entries.length === 0) return;
    entries[0] = last;
    this.down(0);
  }

  private down(start: number): void {
    const entries = this.entries;
    const n = entries.length;
    const entry = entries[start] as Entry;
    let i = start;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) break;
      const right = left + 1;
      let child = left;
      if (right < n && before(entries[right] as Entry, entries[left] as Entry)) child = right;
      const c = entries[child] as Entry;
      if (!before(c, entry)) break;
      entries[i] = c;
      i = child;
    }
    entries[i] = entry;
  }
}
