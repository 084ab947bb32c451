/**
 * The completions alive in this process, so that shutdown can let them finish, then end the rest with an
 * explicit reason, and close the store only once every hold is settled or voided (docs/operations.md).
 */
import { GatewayError } from '../openai/errors.js';

export interface Interruptible {
  interrupt(reason: 'shutdown'): void;
}

export class CompletionRegistry {
  private readonly live = new Set<Interruptible>();
  /** Admitted completions still reserving their hold, and tracked work that outlives a completion. */
  private pending = 0;
  private draining = false;
  /** The grace period is over: every completion, also one added from now on, is interrupted. */
  private interrupting = false;
  private idle: (() => void) | null = null;

  /** Shutdown began: readiness (GET /readyz) says so, so load balancers stop sending traffic. */
  get isDraining(): boolean {
    return this.draining;
  }

  get size(): number {
    return this.live.size + this.pending;
  }

  /**
   * Refuses new completions once shutdown began (the load balancer should already route elsewhere); an
   * admitted one is counted until it is added (its hold reserved) or abandoned.
   */
  admit(): void {
    if (this.draining) {
      throw new GatewayError(503, 'server_error', 'gateway_shutting_down', 'This gateway instance is shutting down. Retry the request.', null, {
        'retry-after': '1',
        connection: 'close',
      });
    }
    this.pending++;
  }

  /**
   * Work that belongs to a completion but ends after it (recording an idempotent answer): shutdown waits for
   * it as for a live completion, so the store is not closed under it.
   */
  track(work: Promise<unknown>): void {
    this.pending++;
    void work.finally(() => {
      this.pending--;
      this.checkIdle();
    });
  }

  /** An admitted completion whose hold was not reserved (refused, or the ledger failed). */
  abandon(): void {
    this.pending--;
    this.checkIdle();
  }

  add(completion: Interruptible): void {
    this.pending--;
    this.live.add(completion);
    // Its hold was being reserved when the others were interrupted: it goes the same way.
    if (this.interrupting) completion.interrupt('shutdown');
  }

  delete(completion: Interruptible): void {
    this.live.delete(completion);
    this.checkIdle();
  }

  private checkIdle(): void {
    if (this.size === 0) this.idle?.();
  }

  /**
   * Stops admitting, waits up to `graceMs` for the live completions to finish by themselves, then interrupts
   * the rest (their streams end with an error event and `[DONE]`, their holds settle) and waits up to
   * `settleMs` for their holds to end. Resolves with the number still alive at the end (0 unless the ledger
   * could not be reached).
   */
  async drain(graceMs: number, settleMs: number): Promise<number> {
    this.draining = true;
    if (!(await this.waitIdle(graceMs))) {
      this.interrupting = true;
      for (const completion of [...this.live]) completion.interrupt('shutdown');
      await this.waitIdle(settleMs);
    }
    return this.size;
  }

  private waitIdle(ms: number): Promise<boolean> {
    if (this.size === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.idle = null;
        resolve(false);
      }, ms);
      this.idle = () => {
        clearTimeout(timer);
        this.idle = null;
        resolve(true);
      };
    });
  }
}
