import { allocate, validateReserve } from '../ledger-rules.js';
import type { ReserveInput, ReserveResult } from '../types.js';
import { utcDay } from '../utc-day.js';
import { addCommitted, committedOn } from './daily-usage.js';
import type { SqliteConnection } from './database.js';
import { adjustRemaining, spendableGrants } from './grants.js';
import { findHold, insertHold } from './holds.js';
import { keyChain } from './key-chain.js';
import { appendEntries } from './journal.js';

/**
 * Must run inside an IMMEDIATE transaction: the key, cap and balance checks and the writes are one step,
 * which is what keeps balances from going negative under concurrent requests.
 * Every rejection returns before the first write, so a refused reserve leaves no trace.
 */
export function reserveHold(conn: SqliteConnection, input: ReserveInput, now: number): ReserveResult {
  validateReserve(input);
  const existing = findHold(conn, input.holdId);
  // Hold ids double as idempotency keys: a retried reserve gets the original hold, whatever its state,
  // and the state tells the caller whether it can still be settled.
  if (existing) {
    return { ok: true, holdId: existing.id, amount: existing.amount, leaseExpiresAt: existing.leaseExpiresAt, status: existing.status };
  }

  // The key and its ancestors: a key whose ancestor is revoked is inactive too (revocation cascades, and this
  // also covers a family written before it did).
  const chain = keyChain(conn, input.keyId);
  const key = chain[0];
  if (!key || chain.some((member) => member.revoked_at !== null)) return { ok: false, reason: 'key_inactive' };

  const day = utcDay(now);
  // The key's own cap and each capped ancestor's, against the spend of that ancestor's whole family; an
  // uncapped key has nothing to check. Checked from the root down, so the widest budget is named first.
  const budgets = chain.filter((member) => member.depth === 0 || member.daily_credit_limit !== null);
  for (const member of [...budgets].reverse()) {
    if (member.daily_credit_limit === null) continue;
    const committed = committedOn(conn, member.id, day);
    if (committed + input.amount > member.daily_credit_limit) {
      return { ok: false, reason: 'daily_limit_exceeded', limit: member.daily_credit_limit, committedToday: committed };
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
  appendEntries(
    conn,
    plan.allocations.map((a) => ({ ...owner, kind: 'reserve', amount: a.amount, grantId: a.grantId, holdId: input.holdId })),
    now,
  );
  for (const member of budgets) addCommitted(conn, member.id, day, input.amount);
  return { ok: true, holdId: input.holdId, amount: input.amount, leaseExpiresAt, status: 'pending' };
}
