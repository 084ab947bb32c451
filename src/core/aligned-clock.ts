/**
 * A clock aligned to a reference (the database server), so that every gateway instance agrees on when a
 * lease runs out, a grant expires and a UTC day ends, whatever its own machine's clock says. Between
 * alignments it runs on the monotonic clock (MonotonicClock), not on `Date.now()` plus an offset: a step of
 * the machine's wall clock then moves nothing, where an offset would have carried the step for up to a
 * whole realignment interval (issue 14, item 8). Reading it stays a synchronous addition on the hot path.
 *
 * Each alignment measures the reference with the midpoint of the round trip, as NTP does. The reference
 * was read at some instant of the round trip, so at its end it reads within [remote, remote + round trip];
 * if this clock already reads within that interval the measurement cannot tell it is wrong, and it is left
 * alone. So a measurement taken under load (a long round trip) moves the clock only when it proves it off,
 * and the clock does not jitter by a millisecond at every realignment.
 */
import { MonotonicClock } from './monotonic-clock.js';

/** Integer milliseconds on both sides (the reference's and ours): one of rounding either way. */
const ROUNDING_MS = 1;

export class AlignedClock extends MonotonicClock {
  private aligned = false;

  /**
   * Measures the reference once and re-anchors this clock to it if needed. Returns the round trip (the
   * measurement's error is at most half of it) and whether the clock moved.
   */
  async align(reference: () => Promise<number>): Promise<{ roundTripMs: number; moved: boolean }> {
    const sent = this.monotonic();
    const remote = await reference();
    const received = this.monotonic();
    const roundTripMs = received - sent;
    const estimate = remote + roundTripMs / 2;
    const moved = !this.aligned || Math.abs(this.at(received) - estimate) > roundTripMs / 2 + ROUNDING_MS;
    if (moved) this.anchor(estimate, received);
    this.aligned = true;
    return { roundTripMs, moved };
  }
}
