/**
 * Where the request path's deadlines are kept (an upstream attempt's, the ledger's silence, a slow reader's
 * write deadline). Each is a timer that almost never fires: it is set when a wait begins and cancelled
 * microseconds later when the wait ends. With Node's own timers that was about 9 setTimeout/clearTimeout pairs
 * a request, each with its own duration, so each a list of Node's timer heap of its own (docs/performance.md).
 *
 * The default is one runtime timer per deadline, which every runtime honours. A long-lived Node process
 * installs a DeadlineHeap (deadline-heap.ts) instead: all its deadlines in one heap behind one timer. Workers
 * keep the default: a timer set while serving one request is not promised to fire once that request is over,
 * so one request's timer cannot be trusted with another's deadline there.
 */

/** A deadline that can be called off; cancelling one that fired or was cancelled already does nothing. */
export interface Deadline {
  cancel(): void;
}

export interface DeadlineOptions {
  /** Whether a pending deadline keeps the process alive (Node's `unref`); true unless said otherwise. */
  keepAlive?: boolean;
}

/** Calls `fire` once `ms` milliseconds have passed, unless cancelled first. */
export type ScheduleDeadline = (ms: number, fire: () => void, options?: DeadlineOptions) => Deadline;

/** One runtime timer per deadline. */
export const runtimeTimer: ScheduleDeadline = (ms, fire, options) => {
  const timer = setTimeout(fire, Math.max(0, ms));
  if (options?.keepAlive === false && typeof timer === 'object' && timer !== null && 'unref' in timer) timer.unref();
  return { cancel: () => clearTimeout(timer) };
};

let scheduler: ScheduleDeadline = runtimeTimer;

export function deadlineIn(ms: number, fire: () => void, options?: DeadlineOptions): Deadline {
  return scheduler(ms, fire, options);
}

/**
 * Calls `fire` every `ms` milliseconds until cancelled: a setInterval on the installed scheduler (each
 * period one deadline, set again when it fires, before `fire` runs).
 */
export function repeatEvery(ms: number, fire: () => void, options?: DeadlineOptions): Deadline {
  let cancelled = false;
  let next: Deadline;
  const tick = (): void => {
    if (cancelled) return;
    next = scheduler(ms, tick, options);
    fire();
  };
  next = scheduler(ms, tick, options);
  return {
    cancel: () => {
      cancelled = true;
      next.cancel();
    },
  };
}

/** Set once by a runtime's entry, before it serves; returns the previous one (for tests that swap it). */
export function useDeadlineScheduler(next: ScheduleDeadline): ScheduleDeadline {
  const previous = scheduler;
  scheduler = next;
  return previous;
}
