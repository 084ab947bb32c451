/**
 * Timers for simulated generation. Token times are computed from one start instant rather than chained
 * delays, so timer lateness does not accumulate over a long answer. Every wait honours the abort signal.
 */
import type { SandboxPace } from './faults.js';
import type { StopSignalLike } from '../../core/stop-signal.js';

/** A plausible hosted-model pace, used when the sandbox server is started without one. */
export const DEFAULT_PACE: SandboxPace = { timeToFirstTokenMs: 250, tokensPerSecond: 60 };

/** Unpaced generation yields to the event loop every this many tokens, so I/O and timers still run. */
const UNPACED_YIELD_EVERY = 16;

export function sleep(ms: number, signal: StopSignalLike): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Settles only by rejecting, when the signal fires: how a stalled upstream "holds until the client aborts". */
export function untilAborted(signal: StopSignalLike): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) return reject(signal.reason);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

export class TokenClock {
  private readonly start = Date.now();
  private readonly intervalMs: number;

  constructor(
    private readonly pace: SandboxPace,
    private readonly signal: StopSignalLike,
  ) {
    this.intervalMs = pace.tokensPerSecond > 0 ? 1000 / pace.tokensPerSecond : 0;
  }

  /** Waits until token `index` (0-based) is due: the time to first token, then one interval per token. */
  beforeToken(index: number): Promise<void> {
    const due = this.start + this.pace.timeToFirstTokenMs + index * this.intervalMs;
    const wait = due - Date.now();
    if (wait >= 1) return sleep(wait, this.signal);
    if (index % UNPACED_YIELD_EVERY === 0) return sleep(0, this.signal);
    return this.signal.aborted ? Promise.reject(this.signal.reason) : Promise.resolve();
  }
}
