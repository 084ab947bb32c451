/**
 * Wall time read once, then carried forward by the monotonic clock (`performance.now()`, on every runtime).
 * A step of the machine's wall clock (NTP correcting a large error, an operator's `date -s`, a VM resumed
 * from a snapshot) moves `Date.now()` at once; it does not move the monotonic clock, so it does not move
 * this one. The SQLite gateway uses it as is: its leases, expiries and reaper then ignore steps for as long
 * as the process runs (docs/ledger.md, "Time"). AlignedClock re-anchors it to the database's clock.
 */
import type { Clock } from './clock.js';

export class MonotonicClock implements Clock {
  /** This clock's reading at the monotonic instant `anchorMonotonic`. */
  private anchorMs: number;
  private anchorMonotonic: number;

  constructor(
    protected readonly monotonic: () => number = () => performance.now(),
    protected readonly wall: () => number = () => Date.now(),
  ) {
    this.anchorMs = wall();
    this.anchorMonotonic = monotonic();
  }

  /** Whole milliseconds, as Date.now(): the stores write instants into integer columns. */
  now(): number {
    return Math.floor(this.at(this.monotonic()));
  }

  /** How far this clock is from the machine's wall clock now (a wall-clock step shows here), for logs. */
  get offset(): number {
    return this.now() - this.wall();
  }

  /** The reading at a monotonic instant, unrounded. */
  protected at(monotonicMs: number): number {
    return this.anchorMs + (monotonicMs - this.anchorMonotonic);
  }

  /** From now on, the clock reads `ms` at the monotonic instant `monotonicMs` and runs on from there. */
  protected anchor(ms: number, monotonicMs: number): void {
    this.anchorMs = ms;
    this.anchorMonotonic = monotonicMs;
  }
}
