/**
 * How many requests of one Worker isolate may hold a database connection at once: the `max` of the
 * database URL (docs/edge.md). Each request opens a connection of its own (a Worker may not share sockets
 * between requests), so without a pooler in front of the database a burst opens as many connections at
 * once as it has requests. PostgreSQL starts a backend for every one, refused ones included: on a machine
 * where that takes 40 ms, 500 at once kept the server busy for about ten seconds before it answered any,
 * longer than the gateway waits for a silent ledger. With slots, the rest of the burst waits here.
 *
 * Only numbers are shared between requests (a Worker may not wait on a promise another request resolves):
 * a waiting request polls, so slots go to whoever looks first when one frees, not in arrival order. A
 * slot's lease starts again with each chunk its answer sends; a slot whose request never gave it back
 * (workerd ended the request's work without running its cleanup) counts as free once the lease has run
 * out, so a lost release narrows the limit for a while, never for good. A request that waited `waitMs`
 * without a slot goes on without one: the database's own limit, and the store's wait for it
 * (src/store/postgres/errors.ts), take over.
 */
export interface SlotOptions {
  /** After this long without a touch a slot counts as free, whether or not its request gave it back. */
  leaseMs: number;
  /** How long a request waits for a slot before it goes on without one. */
  waitMs: number;
  /** How soon a waiting request looks again the first time; the pause doubles up to 50 ms. */
  pollMs: number;
}

/**
 * The lease is three keep-alive periods of a stream (server.keepalive_ms, 10 s by default): a live stream
 * renews it with every chunk, and a slot its request lost comes back within half a minute.
 */
export const DEFAULT_SLOT_OPTIONS: SlotOptions = { leaseMs: 30_000, waitMs: 30_000, pollMs: 5 };

export interface Slot {
  /** The request still uses its connection (a chunk of its answer went out): its lease starts again. */
  touch(): void;
  /** Gives the slot back; later calls do nothing. */
  release(): void;
}

/** What a request holds when there are no slots, or when it went on without one. */
export const NO_SLOT: Slot = { touch: () => undefined, release: () => undefined };

/** The longest pause between two looks of a waiting request: each look is CPU billed to the request. */
const MAX_POLL_MS = 50;

export class ConnectionSlots {
  /** When each held slot was taken or last touched, by slot. */
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
    let pause = this.options.pollMs;
    for (;;) {
      const now = performance.now();
      this.expire(now);
      if (this.held.size < this.limit) return this.take(now);
      if (now >= giveUpAt) return NO_SLOT;
      // Jittered, so that the waiters of one burst do not all look at the same instant.
      await new Promise((resolve) => setTimeout(resolve, pause * (0.5 + Math.random() / 2)));
      pause = Math.min(MAX_POLL_MS, pause * 2);
    }
  }

  private take(now: number): Slot {
    const token = {};
    this.held.set(token, now);
    return {
      touch: () => {
        if (this.held.has(token)) this.held.set(token, performance.now());
      },
      release: () => void this.held.delete(token),
    };
  }

  private expire(now: number): void {
    for (const [token, takenAt] of this.held) if (now - takenAt >= this.options.leaseMs) this.held.delete(token);
  }
}
