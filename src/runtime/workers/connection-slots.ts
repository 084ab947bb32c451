/**
 * How many requests of one Worker isolate may hold a database connection at once: the `max` of the
 * database URL (docs/edge.md). Each request opens a connection of its own (a Worker may not share sockets
 * between requests), so without a pooler in front of the database a burst opens as many connections at
 * once as it has requests. PostgreSQL starts a backend for every one, refused ones included: on a machine
 * where that takes 40 ms, 500 at once kept the server busy for about ten seconds before it answered any,
 * longer than the gateway waits for a silent ledger. With slots, the rest of the burst waits here, in turn.
 *
 * Only numbers are shared between requests (a Worker may not wait on a promise another request resolves):
 * a waiting request polls. A slot whose request never gave it back (workerd ended the request's work
 * without running its cleanup) counts as free once its lease has run out, so a lost release narrows the
 * limit for a while, never for good. A request that waited `waitMs` without a slot goes on without one:
 * the database's own limit, and the store's wait for it (src/store/postgres/errors.ts), take over.
 */
export interface SlotOptions {
  /** After this long a slot counts as free whether or not its request gave it back. */
  leaseMs: number;
  /** How long a request waits for a slot before it goes on without one. */
  waitMs: number;
  /** How often a waiting request looks again. */
  pollMs: number;
}

export const DEFAULT_SLOT_OPTIONS: SlotOptions = { leaseMs: 60_000, waitMs: 30_000, pollMs: 5 };

export interface Slot {
  /** Gives the slot back; later calls do nothing. */
  release(): void;
}

const NO_SLOT: Slot = { release: () => undefined };

export class ConnectionSlots {
  /** When each held slot was taken, by slot. */
  private readonly held = new Map<object, number>();

  constructor(
    readonly limit: number,
    private readonly options: SlotOptions = DEFAULT_SLOT_OPTIONS,
  ) {}

  /** Slots held now (leases not yet run out). */
  get inUse(): number {
    this.expire(performance.now());
    return this.held.size;
  }

  /** A slot, once one is free; a slot that holds nothing once `waitMs` passed without one. */
  async acquire(): Promise<Slot> {
    const giveUpAt = performance.now() + this.options.waitMs;
    for (;;) {
      const now = performance.now();
      this.expire(now);
      if (this.held.size < this.limit) return this.take(now);
      if (now >= giveUpAt) return NO_SLOT;
      await new Promise((resolve) => setTimeout(resolve, this.options.pollMs));
    }
  }

  private take(now: number): Slot {
    const token = {};
    this.held.set(token, now);
    return { release: () => void this.held.delete(token) };
  }

  private expire(now: number): void {
    for (const [token, takenAt] of this.held) if (now - takenAt >= this.options.leaseMs) this.held.delete(token);
  }
}
