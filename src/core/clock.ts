/** Time source passed into the app and the store, so tests can move time (expiry, leases, UTC days). */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /**
   * True for a clock that a test moves by hand. A store whose database has a clock of its own (PostgreSQL)
   * then takes every instant from this clock, so the conformance suite can drive leases and expiry. Any
   * other clock (production's) leaves those decisions to the database's own time: a hold's lease, which
   * holds are due, which grants have expired (docs/ledger.md, "Time").
   */
  readonly manual?: boolean;
}

/**
 * The machine's wall clock as it is, steps included. For the CLI's one-shot commands; a long-running
 * gateway uses MonotonicClock or AlignedClock, which a step of the wall clock does not move.
 */
export const systemClock: Clock = { now: () => Date.now() };

/** A clock tests can move by hand. */
export class ManualClock implements Clock {
  readonly manual = true;
  constructor(private current: number) {}
  now(): number {
    return this.current;
  }
  set(ms: number): void {
    this.current = ms;
  }
  advance(ms: number): void {
    this.current += ms;
  }
}
