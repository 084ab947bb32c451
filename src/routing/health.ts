/**
 * Per-target health, kept in each gateway process: a circuit breaker and a moving latency estimate.
 *
 * The breaker opens after `failureThreshold` consecutive failures, so a dead primary stops costing every
 * request its timeout. Once `openMs` has passed, exactly one request may probe it (half-open): success
 * closes the breaker, failure opens it again for twice as long (up to `maxOpenMs`). Failures the request
 * itself caused (a 400, the client hanging up) are not the target's fault and are not counted.
 *
 * Health is per process, not shared through the database: each instance learns within `failureThreshold`
 * requests, and a shared breaker would put a database write on every upstream failure.
 */

export interface HealthSettings {
  failureThreshold: number;
  openMs: number;
  maxOpenMs: number;
  /** Weight of the newest sample in the latency estimate (exponential moving average). */
  latencyAlpha: number;
}

export const DEFAULT_HEALTH: HealthSettings = {
  failureThreshold: 3,
  openMs: 10_000,
  maxOpenMs: 120_000,
  latencyAlpha: 0.2,
};

export type BreakerState = 'closed' | 'open' | 'half_open';

/** What `admit` grants: a normal call, the one half-open probe, or nothing (skip this target). */
export type Admission = 'call' | 'probe' | 'skip';

export interface HealthSnapshot {
  state: BreakerState;
  consecutiveFailures: number;
  /** Epoch ms at which an open breaker lets a probe through; null unless open. */
  retryAt: number | null;
  /** Moving estimate of the time to the first token, in ms; null before the first success. */
  firstTokenMs: number | null;
  successes: number;
  failures: number;
}

export class TargetHealth {
  private state: BreakerState = 'closed';
  private consecutiveFailures = 0;
  private currentOpenMs: number;
  private retryAt = 0;
  private probing = false;
  private firstTokenMs: number | null = null;
  private successes = 0;
  private failures = 0;

  constructor(
    private readonly settings: HealthSettings = DEFAULT_HEALTH,
    private readonly now: () => number = Date.now,
  ) {
    this.currentOpenMs = settings.openMs;
  }

  /** Whether a request may call this target now. A `probe` must be followed by success() or failure() or release(). */
  admit(): Admission {
    if (this.state === 'closed') return 'call';
    if (this.state === 'open') {
      if (this.now() < this.retryAt) return 'skip';
      this.state = 'half_open';
    }
    if (this.probing) return 'skip';
    this.probing = true;
    return 'probe';
  }

  /** The target answered in full; `firstTokenMs` feeds the latency estimate. */
  success(firstTokenMs: number | null): void {
    this.successes++;
    this.consecutiveFailures = 0;
    this.probing = false;
    if (this.state !== 'closed') {
      this.state = 'closed';
      this.currentOpenMs = this.settings.openMs;
    }
    if (firstTokenMs !== null) {
      const a = this.settings.latencyAlpha;
      this.firstTokenMs = this.firstTokenMs === null ? firstTokenMs : a * firstTokenMs + (1 - a) * this.firstTokenMs;
    }
  }

  failure(): void {
    this.failures++;
    this.consecutiveFailures++;
    if (this.state === 'half_open') {
      this.probing = false;
      this.currentOpenMs = Math.min(this.currentOpenMs * 2, this.settings.maxOpenMs);
      this.open();
    } else if (this.state === 'closed' && this.consecutiveFailures >= this.settings.failureThreshold) {
      this.open();
    }
  }

  /** The call ended for a reason that says nothing of the target (client gone, request refused). */
  release(): void {
    this.probing = false;
  }

  snapshot(): HealthSnapshot {
    const open = this.state === 'open' && this.now() < this.retryAt;
    return {
      state: this.state === 'open' && !open ? 'half_open' : this.state,
      consecutiveFailures: this.consecutiveFailures,
      retryAt: open ? this.retryAt : null,
      firstTokenMs: this.firstTokenMs === null ? null : Math.round(this.firstTokenMs),
      successes: this.successes,
      failures: this.failures,
    };
  }

  private open(): void {
    this.state = 'open';
    this.retryAt = this.now() + this.currentOpenMs;
  }
}
