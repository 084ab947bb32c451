import { allocate, validateReserve } from '../ledger-rules.js';
import type { Environment, ReserveInput, ReserveResult } from '../types.js';
import { utcDay } from '../utc-day.js';
import { addCommitted, committedOn } from './daily-usage.js';
import type { SqliteConnection } from './database.js';
import { adjustRemaining, spendableGrants } from './grants.js';
import { findHold, insertHold } from './holds.js';
import { appendEntry } from './journal.js';

interface ActiveKey {
  account_id: string;
  environment: Environment;
  daily_credit_limit: number | null;
  revoked_at: number | null;
}

/**
 * Must run inside an IMMEDIATE transaction: the key, cap and balance checks and the writes are one step,
 * which is what keeps balances from going negative under concurrent requests.
 * Every rejection returns before the first write, so a refused reserve leaves no trace.
 */
export function reserveHold(conn: SqliteConnection, input: ReserveInput, now: number): ReserveResult {
  validateReserve(input);
  const existing = findHold(conn, input.holdId);
  // Hold ids double as idempotency keys: a retried reserve gets the original hold, whatever its state.
  if (existing) return { ok: true, holdId: existing.id, amount: existing.amount, leaseExpiresAt: existing.leaseExpiresAt };

  const key = conn.get<ActiveKey>(
    'SELECT account_id, environment, daily_credit_limit, revoked_at FROM api_keys WHERE id = ?',
    input.keyId,
  );
  if (!key || key.revoked_at !== null) return { ok: false, reason: 'key_inactive' };

  const day = utcDay(now);
  // A key without a cap has nothing to check: the day's row is only read for a capped key.
  if (key.daily_credit_limit !== null) {
    const committed = committedOn(conn, input.keyId, day);
    if (committed + input.amount > key.daily_credit_limit) {
      return { ok: false, reason: 'daily_limit_exceeded', limit: key.daily_credit_limit, committedToday: committed };
    }
  }

  const plan = allocate(spendableGrants(conn, key.account_id, key.environment, now), input.amount);
  if (!plan.ok) return { ok: false, reason: 'insufficient_credits', available: plan.available };

  const leaseExpiresAt = now + input.leaseMs;
  const owner = { accountId: key.account_id, environment: key.environment };
  for (const allocation of plan.allocations) {
    adjustRemaining(conn, allocation.grantId, -allocation.amount);
  }
  insertHold(
    conn,
    { id: input.holdId, ...owner, keyId: input.keyId, day, amount: input.amount, status: 'pending', leaseExpiresAt },
    plan.allocations,
    now,
  );
  for (const allocation of plan.allocations) {
    appendEntry(conn, { ...owner, kind: 'reserve', amount: allocation.amount, grantId: allocation.grantId, holdId: input.holdId }, now);
  }
  addCommitted(conn, input.keyId, day, input.amount);
  return { ok: true, holdId: input.holdId, amount: input.amount, leaseExpiresAt };
}
