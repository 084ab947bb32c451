import type { Allocation } from '../ledger-rules.js';
import { type Hold, type HoldRow, toHold } from '../rows.js';
import type { PgQueryable } from './database.js';
import { type Instant, instantSql } from './database-time.js';

export type { Hold } from '../rows.js';

export async function findHold(db: PgQueryable, holdId: string): Promise<Hold | null> {
  const [row] = await db<HoldRow[]>`
    SELECT id, account_id, environment, key_id, day, amount, status, lease_expires_at FROM holds WHERE id = ${holdId}`;
  return row ? toHold(row) : null;
}

/**
 * The first lock of a settle or void: a second settle of the same hold waits here, then reads the status
 * the first one committed, which is what makes finalizing exactly-once across instances.
 */
export async function lockHold(tx: PgQueryable, holdId: string): Promise<Hold | null> {
  const [row] = await tx<HoldRow[]>`
    SELECT id, account_id, environment, key_id, day, amount, status, lease_expires_at FROM holds
    WHERE id = ${holdId}
    FOR NO KEY UPDATE`;
  return row ? toHold(row) : null;
}

/**
 * Locks up to `limit` pending holds whose lease is due, oldest lease first. SKIP LOCKED passes over holds
 * another reaper (or a settle) has locked, so reapers on several instances share the backlog instead of
 * queueing behind each other; a hold settled meanwhile fails the status recheck and is not returned.
 * With `onlyHoldId`, that one hold if it is still pending and due (the reaper's hold-by-hold pass,
 * reap-isolated.ts).
 */
export async function lockExpiredHolds(tx: PgQueryable, now: number, limit: number, onlyHoldId?: string): Promise<Hold[]> {
  const rows =
    onlyHoldId === undefined
      ? await tx<HoldRow[]>`
    SELECT id, account_id, environment, key_id, day, amount, status, lease_expires_at FROM holds
    WHERE status = 'pending' AND lease_expires_at <= ${now}
    ORDER BY lease_expires_at, created_at, id
    LIMIT ${limit}
    FOR NO KEY UPDATE SKIP LOCKED`
      : await tx<HoldRow[]>`
    SELECT id, account_id, environment, key_id, day, amount, status, lease_expires_at FROM holds
    WHERE id = ${onlyHoldId} AND status = 'pending' AND lease_expires_at <= ${now}
    FOR NO KEY UPDATE SKIP LOCKED`;
  return rows.map(toHold);
}

/**
 * Moves a pending hold's lease out to (`at` + leaseMs), `at` being the database's now() in production, and
 * never shortens it. One statement: it locks only the hold row, which settle, void and the reaper lock first
 * too, so it adds no edge to the lock order. A reaper holding the row makes it wait, then it finds the hold
 * voided and answers false; a reaper that comes after it sees the new lease (READ COMMITTED rechecks the
 * row's latest version). Not journaled: no credit moves, and the lease lives in the hold row.
 */
export async function renewLease(db: PgQueryable, holdId: string, leaseMs: number, at: Instant): Promise<boolean> {
  // `status || ''`, not `status`: a plain `status = 'pending'` matches the predicate of the partial indexes
  // on pending holds, and the planner then walked holds_pending_by_lease (whose third column is the id)
  // instead of reading the primary key, a walk over every entry not yet vacuumed (docs/performance.md).
  const rows = await db`
    UPDATE holds SET lease_expires_at = GREATEST(lease_expires_at, ${instantSql(db, at)} + ${leaseMs}::bigint)
    WHERE id = ${holdId} AND status || '' = 'pending'
    RETURNING 1`;
  return rows.length === 1;
}

/** Allocations of each hold, in allocation order (the spending order chosen at reserve time). */
export async function allocationsOf(db: PgQueryable, holdIds: readonly string[]): Promise<Map<string, Allocation[]>> {
  const rows = await db<{ hold_id: string; grant_id: number; amount: number }[]>`
    SELECT hold_id, grant_id, amount FROM hold_allocations
    WHERE hold_id = ANY(${holdIds}::text[])
    ORDER BY hold_id, seq`;
  const byHold = new Map<string, Allocation[]>(holdIds.map((id) => [id, []]));
  for (const row of rows) byHold.get(row.hold_id)?.push({ grantId: row.grant_id, amount: row.amount });
  return byHold;
}

/** The status guard makes finalizing a second time change nothing even if a caller skipped the check. */
export async function finalizeHolds(
  tx: PgQueryable,
  outcomes: readonly { holdId: string; settledAmount: number | null }[],
  now: number,
): Promise<void> {
  await tx`
    UPDATE holds h SET
      status = CASE WHEN d.settled IS NULL THEN 'voided' ELSE 'settled' END,
      settled_amount = d.settled,
      finalized_at = ${now}
    FROM unnest(${outcomes.map((o) => o.holdId)}::text[], ${outcomes.map((o) => o.settledAmount)}::bigint[]) AS d(id, settled)
    WHERE h.id = d.id AND h.status = 'pending'`;
}

export async function countPending(db: PgQueryable, accountId: string | undefined): Promise<number> {
  const [row] =
    accountId === undefined
      ? await db<{ n: number }[]>`SELECT count(*) AS n FROM holds WHERE status = 'pending'`
      : await db<{ n: number }[]>`SELECT count(*) AS n FROM holds WHERE status = 'pending' AND account_id = ${accountId}`;
  return row?.n ?? 0;
}
