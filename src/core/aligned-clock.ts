/**
 * A clock aligned to a reference (the database server), so that every gateway instance agrees on when a
 * lease runs out, a grant expires and a UTC day ends, whatever its own machine's clock says. The offset is
 * measured with the midpoint of the round trip (as NTP does) and refreshed periodically; reading the clock
 * stays a synchronous addition on the hot path.
 */
import type { Clock } from './clock.js';

export class AlignedClock implements Clock {
  private offsetMs = 0;

  constructor(private readonly local: () => number = () => Date.now()) {}

  now(): number {
    return this.local() + this.offsetMs;
  }

  /** The current offset from the local clock, for logs and tests. */
  get offset(): number {
    return this.offsetMs;
  }

  async align(reference: () => Promise<number>): Promise<void> {
    const sent = this.local();
    const remote = await reference();
    const received = this.local();
    this.offsetMs = Math.round(remote - (sent + received) / 2);
  }
}
