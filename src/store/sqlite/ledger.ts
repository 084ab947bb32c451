import type { Clock } from '../../core/clock.js';
import { assertCount } from '../errors.js';
import { IsolatedReaper } from '../reap-isolated.js';
import { AUDIT_CHECKS, type LedgerAudit } from '../ledger-audit.js';
import { validateSettle } from '../ledger-rules.js';
import type {
  Balance,
  Environment,
  Grant,
  GrantInput,
  LedgerStore,
  ReserveInput,
  ReserveResult,
  SettleInput,
  SettleResult,
} from '../types.js';
import type { SqliteConnection } from './database.js';
import { expireGrants } from './expire.js';
import { settleHold, voidPending } from './finalize.js';
import { balanceOf, insertGrant } from './grants.js';
import { type HoldFacts, countPending, expiredHoldIds, expiredHoldIdsExcept, findEndingHold, renewLease } from './holds.js';
import { ReservedHolds } from './reserved-holds.js';
import { reserveHold } from './reserve.js';

/**
 * Wiring only: each method is one IMMEDIATE transaction around the functions that do the work.
 * The clock is read once per call so every row a transaction writes carries the same instant.
 */
export class SqliteLedgerStore implements LedgerStore {
  /** The holds reserved here and not yet ended, whose settle needs not read them back (reserved-holds.ts). */
  readonly reservedHere = new ReservedHolds();
  private readonly reaper = new IsolatedReaper();
  private readonly made = (facts: HoldFacts): void => this.reservedHere.remember(this.conn, facts);

  constructor(
    private readonly conn: SqliteConnection,
    private readonly clock: Clock,
  ) {}

  async grant(input: GrantInput): Promise<{ grant: Grant; created: boolean }> {
    const now = this.clock.now();
    return this.conn.write(() => insertGrant(this.conn, input, now));
  }

  // reserve and settle are on every request's path: not `async`, which costs two promises more a call
  // around the group commit's own; the clock and the validation do not throw but through the promise.
  reserve(input: ReserveInput): Promise<ReserveResult> {
    const now = this.clock.now();
    return this.conn.write(() => reserveHold(this.conn, input, now, this.made));
  }

  settle(input: SettleInput): Promise<SettleResult> {
    try {
      validateSettle(input);
    } catch (e) {
      return Promise.reject(e);
    }
    const now = this.clock.now();
    return this.conn.write(() => settleHold(this.conn, input, now, this.reservedHere.take(this.conn, input.holdId)));
  }

  async void(holdId: string): Promise<boolean> {
    const now = this.clock.now();
    return this.conn.write(() => {
      this.reservedHere.take(this.conn, holdId);
      const ending = findEndingHold(this.conn, holdId);
      if (ending?.hold.status !== 'pending') return false;
      voidPending(this.conn, ending, now);
      return true;
    });
  }

  /** Through the group commit like every write: the caller hears true only once the new lease is committed. */
  async renewHold(holdId: string, leaseMs: number): Promise<boolean> {
    assertCount(leaseMs, 'leaseMs', 0);
    const leaseExpiresAt = this.clock.now() + leaseMs;
    return this.conn.write(() => renewLease(this.conn, holdId, leaseExpiresAt));
  }

  async balance(accountId: string, environment: Environment): Promise<Balance> {
    return balanceOf(this.conn, accountId, environment, this.clock.now());
  }

  /**
   * Voids up to `limit` due holds, then expires up to `limit` grants (expire.ts); returns the holds voided.
   * One transaction, or, if that fails, one a hold and one for the grants (reap-isolated.ts).
   */
  async reapExpiredHolds(limit: number): Promise<number> {
    assertCount(limit, 'limit', 0);
    const now = this.clock.now();
    return this.reaper.reap({
      batch: () =>
        this.conn.write(() => {
          let voided = 0;
          for (const holdId of expiredHoldIds(this.conn, now, limit)) if (this.voidIfDue(holdId, now)) voided += 1;
          expireGrants(this.conn, now, limit);
          return voided;
        }),
      dueHoldIds: (skip) => this.conn.batched(() => expiredHoldIdsExcept(this.conn, now, limit, skip)),
      voidIfDue: (holdId) => this.conn.write(() => this.voidIfDue(holdId, now)),
      expireGrants: () => this.conn.write(() => expireGrants(this.conn, now, limit)),
    });
  }

  /** Voids the hold if it is pending and its lease ran out by `now`: whether it did. In a write. */
  private voidIfDue(holdId: string, now: number): boolean {
    const ending = findEndingHold(this.conn, holdId);
    // Renewed since it was listed: its completion lives on, and so do the facts its settle will use.
    if (ending?.hold.status === 'pending' && ending.hold.leaseExpiresAt > now) return false;
    this.reservedHere.take(this.conn, holdId);
    if (ending?.hold.status !== 'pending') return false;
    voidPending(this.conn, ending, now);
    return true;
  }

  async countPendingHolds(accountId?: string): Promise<number> {
    return countPending(this.conn, accountId);
  }

  async audit(): Promise<LedgerAudit> {
    // One read transaction, so every check sees the same snapshot even while the server writes.
    return this.conn.read(() => ({
      checks: AUDIT_CHECKS.length,
      findings: AUDIT_CHECKS.flatMap((check) =>
        this.conn
          .all<{ subject: string; detail: string }>(check.sql)
          .map((row) => ({ check: check.name, rule: check.rule, subject: String(row.subject), detail: String(row.detail) })),
      ),
    }));
  }
}
