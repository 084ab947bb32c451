/**
 * One request's credit hold in the ledger: reserve before the upstream call, renew its lease while the
 * completion lives, end it by settle (a charge, capped at the hold) or void. Which of the two, and for how
 * much, is not decided here: src/billing/charge.ts decides and the completion's owner
 * (src/completions/completion.ts) calls exactly one ending.
 *
 * Every ledger call here is idempotent by hold id (a reserve of an existing hold returns it, a settle of a
 * final hold returns its outcome), so a call whose reply was lost (the database committed, the connection
 * reset before the answer) is retried, and the retry finds what the first one did: never a second hold,
 * never a second charge, never a 503 for a request the ledger already served.
 */
import { newTimeOrderedId } from '../core/ids.js';
import { SilenceWatch } from '../core/silence-deadline.js';
import { GatewayError } from '../openai/errors.js';
import { StoreError } from '../store/errors.js';
import type { Balance, LedgerStore, ReserveResult, UsageRecord } from '../store/types.js';

export interface MeterOutcome {
  charged: number;
  /** Available credits (earned + purchased, net of other holds) after this request. */
  balanceRemaining: number;
}

export function availableOf(balance: Balance): number {
  return balance.earned + balance.purchased;
}

/** Waits before each retry of a ledger call the database did not answer: about 3 s in all. */
export const DEFAULT_LEDGER_RETRY_DELAYS_MS: readonly number[] = [50, 200, 600, 1000, 1500];

/** Derived hold ids one idempotent request tries before it takes a fresh one (each failed run ends one). */
const MAX_HOLD_GENERATIONS = 8;

export interface HoldRequest {
  holdId: string;
  keyId: string;
  accountId: string;
  environment: Balance['environment'];
  amount: number;
  leaseMs: number;
  /** The id derives from the request (Idempotency-Key), so an earlier run may have taken it already. */
  mayExist?: boolean;
  /** Whether the key was created by another key: its refusals may come from a cap the family shares. */
  inFamily?: boolean;
}

/**
 * Runs a ledger call, retrying it while the store is unreachable; the calls passed here are idempotent.
 * The whole of it is bounded (the delays plus half a second): a database that neither answers nor refuses
 * (a proxy in front of it that accepts and drops connections makes the driver queue calls until it is back)
 * is answered as unavailable in time, never by a request that hangs. A call given up on may still run
 * later; that is a lost reply, which every call here tolerates.
 *
 * The bound is on the database's silence, not on one call's wait: while other calls of this process keep
 * getting answers, a call queued behind them (a burst of thousands of requests on a small pool) is slow, not
 * unanswered, and waits on, up to HARD_BOUND_FACTOR times the bound.
 */
export function withLedgerRetries<T>(call: () => Promise<T>, delaysMs: readonly number[]): Promise<T> {
  const budget = delaysMs.reduce((a, b) => a + b, 0) + RIDE_OUT_SLACK_MS;
  const giveUpAt = performance.now() + budget;
  // One promise and the call's own `then` per call, not an async loop around a promise-returning deadline:
  // three ledger calls are on every request's path, and each async layer is a promise and a microtask more.
  return new Promise<T>((resolve, reject) => {
    let attempt = 0;
    const failed = (e: unknown): void => {
      const delay = delaysMs[attempt++];
      if (!(e instanceof StoreError && e.code === 'unavailable' && !e.lasting) || delay === undefined || performance.now() + delay >= giveUpAt) {
        reject(e);
        return;
      }
      setTimeout(run, delay);
    };
    const run = (): void => {
      // A retry runs from a timer: a throw here would be uncaught, so anything thrown is a failed attempt.
      try {
        ledgerSilence.watch(call(), giveUpAt - performance.now(), budget * HARD_BOUND_FACTOR, unanswered, provesPresence, resolve, failed);
      } catch (e) {
        failed(e);
      }
    };
    run();
  });
}

const RIDE_OUT_SLACK_MS = 500;
/**
 * A call queued behind others the database keeps answering (a burst on a small pool, or waiting for a slot
 * on a full server: src/store/postgres/errors.ts) waits up to this many times the bound, about a minute, as
 * the store's own wait for a slot does: a queue, not an outage.
 */
const HARD_BOUND_FACTOR = 16;

/**
 * Whether ledger calls of this process get answers. Per process: one process serves one store (tests that
 * start several gateways in one process share it, which only makes a call there wait longer, never fail sooner).
 */
const ledgerSilence = new SilenceWatch();

const unanswered = (waited: number): StoreError => new StoreError('unavailable', `the ledger did not answer within ${Math.round(waited)} ms`);
/** Any answer but "unreachable" shows the database is there, a transaction it ended for contention included. */
const provesPresence = (e: unknown): boolean => !(e instanceof StoreError && e.code === 'unavailable' && !e.contention);

export class Meter {
  private constructor(
    private readonly ledger: LedgerStore,
    private readonly request: HoldRequest,
    readonly held: number,
    private readonly retryDelaysMs: readonly number[],
  ) {}

  get holdId(): string {
    return this.request.holdId;
  }

  /**
   * Holds `amount` credits for the key, or throws the 402 (or 401) that says why not. A hold id that already
   * exists (a retried reserve whose first reply was lost) is found again, not taken twice.
   */
  static async open(ledger: LedgerStore, request: HoldRequest, retryDelaysMs: readonly number[]): Promise<Meter> {
    let r: ReserveResult;
    let holdId = request.holdId;
    let mayExist = request.mayExist === true;
    for (let generation = 1; ; generation++) {
      const id = holdId;
      r = await withLedgerRetries(
        () => ledger.reserve({ holdId: id, keyId: request.keyId, amount: request.amount, leaseMs: request.leaseMs }),
        retryDelaysMs,
      );
      if (!r.ok) break;
      // A pending hold found again may be an earlier run's (an idempotent retry taking over from a run that
      // died), whose lease may be about to run out: renew it before relying on it. False: the reaper or its
      // run ended it meanwhile.
      if (r.status === 'pending' && (!mayExist || (await withLedgerRetries(() => ledger.renewHold(id, request.leaseMs), retryDelaysMs)))) break;
      // A hold id that already ended belongs to an earlier run of this request: this run needs a hold of its
      // own, under the next derived id (which its own retries will find again), or at last a fresh one.
      if (generation < MAX_HOLD_GENERATIONS) {
        holdId = `${request.holdId}.${generation}`;
      } else {
        holdId = newTimeOrderedId('hold_');
        mayExist = false;
      }
    }
    if (r.ok) return new Meter(ledger, { ...request, holdId }, r.amount, retryDelaysMs);
    switch (r.reason) {
      case 'insufficient_credits':
        throw new GatewayError(
          402,
          'insufficient_quota',
          'insufficient_credits',
          `This request may cost up to ${request.amount} credits (prompt plus the max_tokens bound) but ${r.available} are available. Lower max_tokens or add credits.`,
        );
      case 'daily_limit_exceeded':
        throw new GatewayError(
          402,
          'insufficient_quota',
          'daily_credit_limit_exceeded',
          `${
            request.inFamily === true
              ? `This key was created by another key and shares its family's daily credit limit of ${r.limit}`
              : `This key's daily credit limit is ${r.limit}, shared with the keys it created`
          }; ${r.committedToday} are used or held today (UTC) and this request may cost up to ${request.amount}. Lower max_tokens or wait for the next UTC day.`,
        );
      case 'key_inactive':
        throw new GatewayError(401, 'authentication_error', 'revoked_api_key', 'This API key has been revoked.');
    }
  }

  /** Pushes the lease out while the completion lives; false once the hold is no longer pending. */
  renew(): Promise<boolean> {
    return this.ledger.renewHold(this.request.holdId, this.request.leaseMs);
  }

  settle(amount: number, usage: UsageRecord): Promise<MeterOutcome> {
    return withLedgerRetries(() => this.ledger.settle({ holdId: this.request.holdId, amount, usage }), this.retryDelaysMs).then((r) => {
      if (r.status === 'settled' || r.status === 'already_final') return { charged: r.charged, balanceRemaining: availableOf(r.balance) };
      throw new Error(`settle of unknown hold ${this.request.holdId}`);
    });
  }

  async void(): Promise<MeterOutcome> {
    await withLedgerRetries(() => this.ledger.void(this.request.holdId), this.retryDelaysMs);
    const balance = await withLedgerRetries(() => this.ledger.balance(this.request.accountId, this.request.environment), this.retryDelaysMs);
    return { charged: 0, balanceRemaining: availableOf(balance) };
  }
}
