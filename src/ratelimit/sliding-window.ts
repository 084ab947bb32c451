/**
 * The in-process limiter: per key, a log of the admitted requests of the last 60 s (time and tokens) and
 * their running token sum. Exact: a decision and its record happen in one synchronous step, so 200
 * concurrent requests see each other's admissions. Memory: one entry per request admitted in the last
 * minute, and keys idle for a whole window are dropped (the map is kept in least-recently-used order).
 */
import type { Clock } from '../core/clock.js';
import {
  RATE_WINDOW_MS,
  decideOver,
  type RateDecision,
  type RateLimiter,
  type RateLimits,
  type RateRequest,
  type WindowVerdict,
} from './rate-limiter.js';

class KeyWindow {
  private readonly at: number[] = [];
  private readonly cost: number[] = [];
  private head = 0;
  tokens = 0;

  get count(): number {
    return this.at.length - this.head;
  }

  /** Forgets what left the window: entries at or before `floor`. */
  expire(floor: number): void {
    while (this.head < this.at.length && (this.at[this.head] as number) <= floor) {
      this.tokens -= this.cost[this.head] as number;
      this.head += 1;
    }
    if (this.head > 1024 && this.head * 2 > this.at.length) {
      this.at.splice(0, this.head);
      this.cost.splice(0, this.head);
      this.head = 0;
    }
    if (this.count === 0) this.tokens = 0;
  }

  add(now: number, tokens: number): void {
    this.at.push(now);
    this.cost.push(tokens);
    this.tokens += tokens;
  }

  newest(): number | null {
    return this.count === 0 ? null : (this.at[this.at.length - 1] as number);
  }

  /** Time of the i-th oldest entry still in the window. */
  timeAt(i: number): number {
    return this.at[this.head + i] as number;
  }

  /** Time of the entry whose expiry frees at least `needed` tokens, counting from the oldest. */
  timeFreeing(needed: number): number {
    let freed = 0;
    for (let i = this.head; i < this.at.length; i++) {
      freed += this.cost[i] as number;
      if (freed >= needed) return this.at[i] as number;
    }
    return this.newest() ?? 0;
  }
}

export class InProcessRateLimiter implements RateLimiter {
  private readonly windows = new Map<string, KeyWindow>();

  constructor(
    private readonly clock: Clock,
    private readonly windowMs: number = RATE_WINDOW_MS,
  ) {}

  admit(request: RateRequest): Promise<RateDecision> {
    return Promise.resolve(this.decide(request));
  }

  /**
   * The synchronous decision (the whole of admit): no other request can interleave, so the key's window and
   * its ancestors' are judged and recorded together.
   */
  decide({ keyId, limits, tokens, ancestors = [] }: RateRequest): RateDecision {
    const now = this.clock.now();
    const floor = now - this.windowMs;
    const limited = [{ keyId, limits }, ...ancestors].filter((w) => w.limits.rpm !== null || w.limits.tpm !== null);
    if (limited.length === 0) return { allowed: true, requests: null, tokens: null, retryAfterMs: 0, tooLarge: false };
    // Before the windows are taken: it must not drop one of them (a new window is empty, so it looks idle).
    this.dropOneIdle(floor);
    const windows = limited.map((w) => ({ limits: w.limits, window: this.window(w.keyId, floor) }));
    const judged = windows.map(({ limits: l, window: w }) => ({ w, verdict: this.judge(w, l, tokens, now) }));
    const admitted = judged.every((j) => j.verdict.ok);
    if (admitted) for (const j of judged) j.w.add(now, tokens);
    return decideOver(
      judged.map(({ w, verdict }) => {
        const newest = w.newest();
        return { ...verdict, count: w.count, tokens: w.tokens, resetMs: newest === null ? 0 : Math.max(0, newest + this.windowMs - now) };
      }),
    );
  }

  /** The key's window, expired up to `floor`, moved to the most recently used end of the map. */
  private window(keyId: string, floor: number): KeyWindow {
    let w = this.windows.get(keyId);
    if (w === undefined) w = new KeyWindow();
    else this.windows.delete(keyId);
    // Re-inserted last: the first entry of the map is the key used least recently.
    this.windows.set(keyId, w);
    w.expire(floor);
    return w;
  }

  private judge(w: KeyWindow, limits: RateLimits, tokens: number, now: number): Pick<WindowVerdict, 'limits' | 'ok' | 'tooLarge' | 'retryAfterMs'> {
    const tooLarge = limits.tpm !== null && tokens > limits.tpm;
    const requestsOk = limits.rpm === null || w.count < limits.rpm;
    const tokensOk = limits.tpm === null || w.tokens + tokens <= limits.tpm;
    let retryAt = now;
    if (!tooLarge) {
      if (!requestsOk && limits.rpm !== null) retryAt = Math.max(retryAt, w.timeAt(w.count - limits.rpm) + this.windowMs);
      if (!tokensOk && limits.tpm !== null) retryAt = Math.max(retryAt, w.timeFreeing(w.tokens + tokens - limits.tpm) + this.windowMs);
    }
    return { limits, ok: !tooLarge && requestsOk && tokensOk, tooLarge, retryAfterMs: retryAt - now };
  }

  /** Keys in the process: for tests of the memory bound. */
  get size(): number {
    return this.windows.size;
  }

  close(): Promise<void> {
    this.windows.clear();
    return Promise.resolve();
  }

  private dropOneIdle(floor: number): void {
    for (const [id, w] of this.windows) {
      if ((w.newest() ?? -Infinity) <= floor) this.windows.delete(id);
      return;
    }
  }
}
