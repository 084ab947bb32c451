import type { Clock } from '../../core/clock.js';
import { assertCount } from '../errors.js';
import { IsolatedReaper } from '../reap-isolated.js';
import type { LedgerAudit } from '../ledger-audit.js';
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
import { auditLedger } from './audit.js';
import type { PgSql } from './database.js';
import type { Instant } from './database-time.js';
import { guard } from './errors.js';
import { balanceOf, insertGrant } from './grants.js';
import { countPending, renewLease } from './holds.js';
import { reserveHold } from './reserve.js';
import { reapExpiredHolds, reapSteps, settleHold, voidHold } from './settle.js';

/**
 * Wiring only: each method is one statement or one READ COMMITTED transaction (reserve.ts, settle.ts).
 * The clock is read once per call so every row a transaction writes carries the same instant. Leases, due
 * holds and expiry are judged by the database's own time unless the clock is a test's (database-time.ts).
 */
export class PostgresLedgerStore implements LedgerStore {
  private readonly reaper = new IsolatedReaper();

  constructor(
    private readonly sql: PgSql,
    private readonly clock: Clock,
  ) {}

  async grant(input: GrantInput): Promise<{ grant: Grant; created: boolean }> {
    return guard(() => insertGrant(this.sql, input, this.clock.now()));
  }

  async reserve(input: ReserveInput): Promise<ReserveResult> {
    return guard(() => reserveHold(this.sql, input, this.decisionInstant()));
  }

  async settle(input: SettleInput): Promise<SettleResult> {
    return guard(() => settleHold(this.sql, input, this.clock.now()));
  }

  async void(holdId: string): Promise<boolean> {
    return guard(() => voidHold(this.sql, holdId, this.clock.now()));
  }

  async renewHold(holdId: string, leaseMs: number): Promise<boolean> {
    assertCount(leaseMs, 'leaseMs', 0);
    return guard(() => renewLease(this.sql, holdId, leaseMs, this.decisionInstant()));
  }

  async balance(accountId: string, environment: Environment): Promise<Balance> {
    return guard(() => balanceOf(this.sql, accountId, environment, this.clock.now()));
  }

  /** One transaction, or, if that fails, one a hold and one for the grants (reap-isolated.ts). */
  async reapExpiredHolds(limit: number): Promise<number> {
    assertCount(limit, 'limit', 0);
    const at = this.decisionInstant();
    const steps = reapSteps(this.sql, limit, at);
    return this.reaper.reap({
      batch: () => guard(() => reapExpiredHolds(this.sql, limit, at)),
      dueHoldIds: (skip) => guard(() => steps.dueHoldIds(skip)),
      voidIfDue: (holdId) => guard(() => steps.voidIfDue(holdId)),
      expireGrants: () => guard(steps.expireGrants),
    });
  }

  /** A test's hand-moved clock decides; otherwise null: the database's time, read in the statement. */
  private decisionInstant(): Instant {
    return this.clock.manual === true ? this.clock.now() : null;
  }

  async countPendingHolds(accountId?: string): Promise<number> {
    return guard(() => countPending(this.sql, accountId));
  }

  async audit(): Promise<LedgerAudit> {
    return guard(() => auditLedger(this.sql));
  }
}
