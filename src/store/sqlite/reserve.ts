import { allocate, validateReserve } from '../ledger-rules.js';
import type { ReserveInput, ReserveResult } from '../types.js';
import { utcDay } from '../utc-day.js';
import { addCommitted, committedOn } from './daily-usage.js';
import type { SqliteConnection } from './database.js';
import { SPENDABLE_GRANTS_JSON, adjustRemaining, spendableFrom } from './grants.js';
import { type Hold, type HoldFacts, findHold, insertHold } from './holds.js';
import { type KeyRowForChain, chainFrom } from './key-chain.js';
import { appendEntries } from './journal.js';

/**
 * Must run inside an IMMEDIATE transaction: the key, cap and balance checks and the writes are one step,
 * which is what keeps balances from going negative under concurrent requests.
 * Every rejection returns before the first write, so a refused reserve leaves no trace. `made` hears the
 * facts of a hold it writes (reserved-holds.ts).
 */
export function reserveHold(conn: SqliteConnection, input: ReserveInput, now: number, made?: (facts: HoldFacts) => void): ReserveResult {
  validateReserve(input);
  const read = keyHoldAndGrants(conn, input.keyId, input.holdId, now);
  // Hold ids double as idempotency keys: a retried reserve gets the original hold, whatever its state,
  // and the state tells the caller whether it can still be settled.
  const existing = read === undefined ? findHold(conn, input.holdId) : read.hold;
  if (existing) {
    return { ok: true, holdId: existing.id, amount: existing.amount, leaseExpiresAt: existing.leaseExpiresAt, status: existing.status };
  }
  if (read === undefined) return { ok: false, reason: 'key_inactive' };

  // The key and its ancestors: a key whose ancestor is revoked is inactive too (revocation cascades, and this
  // also covers a family written before it did).
  const chain = chainFrom(conn, read.key);
  const key = read.key;
  if (chain.some((member) => member.revoked_at !== null)) return { ok: false, reason: 'key_inactive' };

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

  const owner = { accountId: key.account_id, environment: key.environment };
  const plan = allocate(spendableFrom(conn, read.grants, owner, now), input.amount);
  if (!plan.ok) return { ok: false, reason: 'insufficient_credits', available: plan.available };

  const leaseExpiresAt = now + input.leaseMs;
  for (const allocation of plan.allocations) {
    adjustRemaining(conn, owner, allocation.grantId, -allocation.amount);
  }
  const hold: Hold = {
    id: input.holdId,
    accountId: owner.accountId,
    environment: owner.environment,
    keyId: input.keyId,
    day,
    amount: input.amount,
    status: 'pending',
    leaseExpiresAt,
  };
  insertHold(conn, hold, plan.allocations, now);
  appendEntries(
    conn,
    plan.allocations.map((a) => ({ accountId: owner.accountId, environment: owner.environment, kind: 'reserve', amount: a.amount, grantId: a.grantId, holdId: input.holdId })),
    now,
  );
  for (const member of budgets) addCommitted(conn, member.id, day, input.amount);
  made?.({ hold, allocations: plan.allocations, parentKeyId: key.parent_key_id });
  return { ok: true, holdId: input.holdId, amount: input.amount, leaseExpiresAt, status: 'pending' };
}

/** What a retried reserve answers with. */
type ExistingHold = Pick<Hold, 'id' | 'amount' | 'status' | 'leaseExpiresAt'>;

/**
 * The key's own row, the hold `holdId` if it exists and the key's account's spendable grants, in one
 * statement: every reserve reads all three (the hold to answer a retried reserve, the key for its owner, caps
 * and revocation, the grants to draw from). Undefined if there is no such key.
 */
function keyHoldAndGrants(
  conn: SqliteConnection,
  keyId: string,
  holdId: string,
  now: number,
): { key: KeyRowForChain; hold: ExistingHold | null; grants: string } | undefined {
  const row = conn.get<
    KeyRowForChain & { hold_id: string | null; hold_amount: number; hold_status: Hold['status']; hold_lease_expires_at: number; grants: string }
  >(
    `SELECT k.id, k.account_id, k.environment, k.daily_credit_limit, k.revoked_at, 0 AS depth, k.parent_key_id,
            h.id AS hold_id, h.amount AS hold_amount, h.status AS hold_status, h.lease_expires_at AS hold_lease_expires_at,
            ${SPENDABLE_GRANTS_JSON} AS grants
     FROM api_keys k LEFT JOIN holds h ON h.id = ?2 WHERE k.id = ?1`,
    keyId,
    holdId,
    now,
  );
  if (row === undefined) return undefined;
  // Field by field: an object rest (`...key`) is a runtime call that builds a slow object, and the key's
  // fields are read all through the reserve.
  const key: KeyRowForChain = {
    id: row.id,
    account_id: row.account_id,
    environment: row.environment,
    daily_credit_limit: row.daily_credit_limit,
    revoked_at: row.revoked_at,
    depth: 0,
    parent_key_id: row.parent_key_id,
  };
  const hold = row.hold_id === null ? null : { id: row.hold_id, amount: row.hold_amount, status: row.hold_status, leaseExpiresAt: row.hold_lease_expires_at };
  return { key, hold, grants: row.grants };
}
