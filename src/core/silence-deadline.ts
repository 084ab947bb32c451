/**
 * A deadline on a dependency's silence rather than on one call's wait. Under a burst (thousands of requests
 * on a pool of ten connections) a call queued behind the others is slow, not unanswered: as long as calls of
 * this process keep getting answers, it waits on, up to a hard bound. Only when nothing has answered for
 * the whole deadline is the dependency called unavailable, so an outage is still answered in time.
 */
import { type Deadline, deadlineIn } from './deadline-timers.js';

export class SilenceWatch {
  private lastAnswerAt = performance.now();

  /** Something answered: a result, or an error that proves the dependency is there. */
  answered(): void {
    this.lastAnswerAt = performance.now();
  }

  /**
   * Settles as `pending` does, or rejects with `timeout()` once nothing answered for `ms` and this call
   * waited at least that long, or once it waited `hardMs` whatever the others do.
   */
  within<T>(pending: Promise<T>, ms: number, hardMs: number, timeout: (waitedMs: number) => Error, provesPresence: (e: unknown) => boolean): Promise<T> {
    return new Promise<T>((resolve, reject) => this.watch(pending, ms, hardMs, timeout, provesPresence, resolve, reject));
  }

  /**
   * `within` for a caller that has its own promise to settle (src/billing/meter.ts): the outcome goes to
   * `onValue` or `onError`, exactly one of them once, and no promise is made here but `pending`'s `then`.
   */
  watch<T>(
    pending: Promise<T>,
    ms: number,
    hardMs: number,
    timeout: (waitedMs: number) => Error,
    provesPresence: (e: unknown) => boolean,
    onValue: (value: T) => void,
    onError: (e: unknown) => void,
  ): void {
    const started = performance.now();
    let settled = false;
    let timer: Deadline | undefined;
    const check = (): void => {
      const now = performance.now();
      const silentFor = now - this.lastAnswerAt;
      if (silentFor >= ms || now - started >= hardMs) {
        settled = true;
        onError(timeout(now - started));
        return;
      }
      timer = deadlineIn(Math.max(1, Math.min(ms - silentFor, hardMs - (now - started))), check);
    };
    // A call given up on still says, when it answers, that the dependency is there. Registered before the
    // timer is armed: a `pending` that is no promise throws here, with nothing armed to fire later.
    pending.then(
      (value) => {
        timer?.cancel();
        this.answered();
        if (settled) return;
        settled = true;
        onValue(value);
      },
      (e: unknown) => {
        timer?.cancel();
        if (provesPresence(e)) this.answered();
        if (settled) return;
        settled = true;
        onError(e);
      },
    );
    timer = deadlineIn(Math.max(ms, 0), check);
  }
}
