import { allocate, validateReserve } from '../ledger-rules.js';
import type { Environment, ReserveInput, ReserveResult } from '../types.js';
import { utcDay } from '../utc-day.js';
import { chargeDay } from './daily-usage.js';
import { type Abort, type PgSql, type PgTx, transaction } from './database.js';
import { UNIQUE_VIOLATION, pgError } from './errors.js';
import { adjustRemaining, lockSpendableGrants } from './grants.js';
import { findHold, insertHold } from './holds.js';
import { appendEntries } from './journal.js';

interface KeyRow {
  account_id: string;
  environment: Environment;
  daily_credit_limit: number | null;
  revoked_at: number | null;
}

/**
 * One READ COMMITTED transaction that decides under row locks taken in the store's fixed order
 * (docs/ledger.md, "Storage (PostgreSQL)"): the key row, the key's row of the day, then the
 * account's spendable grants. Every refusal leaves no trace: before the first write it simply returns,
 * after it (credits short once the day was charged) it rolls back.
 */
export async function reserveHold(sql: PgSql, input: ReserveInput, now: number): Promise<ReserveResult> {
  validateReserve(input);
  try {
    return await transaction(sql, (tx, abort) => reserveIn(tx, input, now, abort));
  } catch (error) {
    // Another instance committed a hold with this id after our check: reserving again returns it.
    if (pgError(error)?.code === UNIQUE_VIOLATION && pgError(error)?.constraint === 'holds_pkey') {
      const hold = await findHold(sql, input.holdId);
      if (hold) return { ok: true, holdId: hold.id, amount: hold.amount, leaseExpiresAt: hold.leaseExpiresAt };
    }
    throw error;
  }
}

async function reserveIn(tx: PgTx, input: ReserveInput, now: number, abort: Abort): Promise<ReserveResult> {
  // Pipelined: one round trip. The key row lock waits for an in-flight revocation and then reads it, and
  // makes a revocation wait for this reserve, so nothing is admitted with a key after its revokeKey()
  // returned. Not FOR SHARE: share lockers never queue behind a waiting UPDATE, so a busy key's stream of
  // overlapping reserves could postpone its revocation indefinitely. Reserves of one key are serialized
  // anyway, by the row of the day that follows.
  const [existing, [key]] = await Promise.all([
    findHold(tx, input.holdId),
    tx<KeyRow[]>`SELECT account_id, environment, daily_credit_limit, revoked_at FROM api_keys WHERE id = ${input.keyId} FOR NO KEY UPDATE`,
  ]);
  // Hold ids double as idempotency keys: a retried reserve gets the original hold, whatever its state.
  if (existing) return { ok: true, holdId: existing.id, amount: existing.amount, leaseExpiresAt: existing.leaseExpiresAt };
  if (!key || key.revoked_at !== null) return { ok: false, reason: 'key_inactive' };

  const day = utcDay(now);
  // Pipelined, one round trip, still in lock order (the day's row, then the grants): both only need the
  // key row. A refused day leaves the grants locked until the transaction ends a moment later, unchanged.
  const [charge, grants] = await Promise.all([
    chargeDay(tx, input.keyId, day, input.amount, key.daily_credit_limit),
    lockSpendableGrants(tx, key.account_id, key.environment, now),
  ]);
  if (!charge.ok) return { ok: false, reason: 'daily_limit_exceeded', limit: charge.limit, committedToday: charge.committed };

  const plan = allocate(grants, input.amount);
  if (!plan.ok) return abort<ReserveResult>({ ok: false, reason: 'insufficient_credits', available: plan.available });

  const leaseExpiresAt = now + input.leaseMs;
  const owner = { accountId: key.account_id, environment: key.environment };
  // Pipelined writes, in lock order: grants (already locked above), then the new hold and its journal.
  await Promise.all([
    adjustRemaining(tx, new Map(plan.allocations.map((a) => [a.grantId, -a.amount]))),
    insertHold(
      tx,
      { id: input.holdId, ...owner, keyId: input.keyId, day, amount: input.amount, status: 'pending', leaseExpiresAt },
      plan.allocations,
      now,
    ),
    appendEntries(
      tx,
      plan.allocations.map((a) => ({ ...owner, kind: 'reserve' as const, amount: a.amount, grantId: a.grantId, holdId: input.holdId })),
      now,
    ),
  ]);
  return { ok: true, holdId: input.holdId, amount: input.amount, leaseExpiresAt };
}
