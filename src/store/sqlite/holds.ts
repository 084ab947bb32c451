import { type Allocation, chargeFor } from '../ledger-rules.js';
import { type Hold, type HoldRow, toHold } from '../rows.js';
import type { AtCommit, SqlParam, SqliteConnection } from './database.js';
import { insertRows } from './multi-row-insert.js';

export type { Hold } from '../rows.js';

/** Whose a hold is: what its usage event names. */
export type HoldOwner = Pick<Hold, 'id' | 'accountId' | 'environment' | 'keyId'>;

export function findHold(conn: SqliteConnection, holdId: string): Hold | null {
  const row = conn.get<HoldRow>(
    'SELECT id, account_id, environment, key_id, day, amount, status, lease_expires_at FROM holds WHERE id = ?',
    holdId,
  );
  return row ? toHold(row) : null;
}

export function insertHold(conn: SqliteConnection, hold: Hold, allocations: readonly Allocation[], now: number): void {
  conn.run(
    `INSERT INTO holds (id, account_id, environment, key_id, day, amount, status, lease_expires_at, created_at)
     VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?)`,
    hold.id,
    hold.accountId,
    hold.environment,
    hold.keyId,
    hold.day,
    hold.amount,
    hold.leaseExpiresAt,
    now,
  );
  const rows = conn.atCommit(ALLOCATION_ROWS, () => new AllocationRows());
  allocations.forEach((allocation, seq) => {
    rows.params.push(hold.id, seq, allocation.grantId, allocation.amount);
  });
  rows.byHold.set(hold.id, allocations);
}

/** Where a transaction's AllocationRows wait for its end (SqliteConnection.atCommit). */
const ALLOCATION_ROWS = 'hold_allocations';
const ALLOCATION_INSERT = { head: 'INSERT INTO hold_allocations (hold_id, seq, grant_id, amount) VALUES ', row: '(?, ?, ?, ?)' };

/**
 * The allocations of a transaction's new holds, written at its end together (multi-row-insert.ts), as the
 * journal's rows are: one INSERT a reserve cost a statement of its own. The one read of allocations inside
 * a write, ending a hold (findEndingHold), looks here first, so a hold ended in the transaction that made it
 * (by a void, say) still returns its credits.
 */
class AllocationRows implements AtCommit {
  readonly params: SqlParam[] = [];
  readonly byHold = new Map<string, readonly Allocation[]>();

  run(conn: SqliteConnection): void {
    insertRows(conn, ALLOCATION_INSERT, 4, this.params);
  }
}

/**
 * What settling a hold needs that stays as it is for the hold's whole life: whose it is, its day and amount,
 * its allocations in spending order and its key's parent. The reserve that made it knows all of it
 * (ledger.ts keeps it for the settle); anything else reads it with the hold (EndingHold).
 */
export interface HoldFacts {
  hold: Pick<Hold, 'id' | 'accountId' | 'environment' | 'keyId' | 'day' | 'amount'>;
  allocations: readonly Allocation[];
  /** The key's parent, whose daily counters the reserve may also have added to (daily-usage.ts). */
  parentKeyId: string | null;
}

/** A hold as read with what ending it needs. */
export interface EndingHold extends HoldFacts {
  hold: Hold;
  /** What a final hold was settled for (null when voided or still pending). */
  settledAmount: number | null;
}

type EndingRow = HoldRow & { parent_key_id: string | null; settled_amount: number | null; allocations: string };

/** The allocations of an ending hold: from its row's JSON, or, for a hold made in this transaction, from AllocationRows. */
function endingHold(conn: SqliteConnection, row: EndingRow): EndingHold {
  const unwritten = conn.pendingAt<AllocationRows>(ALLOCATION_ROWS)?.byHold.get(row.id);
  const allocations =
    unwritten !== undefined
      ? unwritten.map(({ grantId, amount }) => ({ grantId, amount }))
      : (JSON.parse(row.allocations) as [number, number][]).map(([grantId, amount]) => ({ grantId, amount }));
  return { hold: toHold(row), allocations, parentKeyId: row.parent_key_id, settledAmount: row.settled_amount };
}

/** Its allocations in spending order, as one JSON array (one row: a multi-row read costs libsql about 3 us more). */
const ALLOCATIONS_JSON = (hold: string): string =>
  `(SELECT json_group_array(json_array(a.grant_id, a.amount) ORDER BY a.seq) FROM hold_allocations a WHERE a.hold_id = ${hold}.id)`;

/**
 * One read for a void, the reaper or a settle of a hold that is not pending: the hold, its key's parent and
 * its allocations in spending order, in one row. Null if there is no such hold. The key's join is outer: no
 * state of another table may make a hold unknown to the one call that ends it.
 */
export function findEndingHold(conn: SqliteConnection, holdId: string): EndingHold | null {
  const row = conn.get<EndingRow>(
    `SELECT h.id, h.account_id, h.environment, h.key_id, h.day, h.amount, h.status, h.lease_expires_at, h.settled_amount,
            k.parent_key_id, ${ALLOCATIONS_JSON('h')} AS allocations
     FROM holds h LEFT JOIN api_keys k ON k.id = h.key_id
     WHERE h.id = ?`,
    holdId,
  );
  return row === undefined ? null : endingHold(conn, row);
}

/**
 * Settles the hold if it is pending, for `requested` credits capped at what it holds (the rule of
 * ledger-rules.ts, in SQL), and returns it as ending it needs, in one statement where a read and an UPDATE
 * were two: every request ends this way. Null if the hold is unknown or already final, which changes nothing.
 */
export function settleIfPending(conn: SqliteConnection, holdId: string, requested: number, now: number): EndingHold | null {
  const row = conn.get<EndingRow>(
    `UPDATE holds SET status = 'settled', settled_amount = min(max(?1, 0), amount), finalized_at = ?2
     WHERE id = ?3 AND status = 'pending'
     RETURNING id, account_id, environment, key_id, day, amount, status, lease_expires_at, settled_amount,
       (SELECT k.parent_key_id FROM api_keys k WHERE k.id = holds.key_id) AS parent_key_id, ${ALLOCATIONS_JSON('holds')} AS allocations`,
    requested,
    now,
    holdId,
  );
  return row === undefined ? null : endingHold(conn, row);
}

/**
 * settleIfPending for a hold whose facts the caller knows (it reserved it): the UPDATE alone, without the
 * RETURNING that reads them back, 7 us where that statement cost 17 (docs/performance.md, "Sixteenth
 * session"). The charge, if the hold was pending and is now settled for it; null if it was not pending,
 * which changes nothing.
 */
export function settleKnownIfPending(conn: SqliteConnection, facts: HoldFacts, requested: number, now: number): number | null {
  const charged = chargeFor(requested, facts.hold.amount);
  const changed = conn.run(
    `UPDATE holds SET status = 'settled', settled_amount = ?, finalized_at = ? WHERE id = ? AND status = 'pending'`,
    charged,
    now,
    facts.hold.id,
  );
  return changed === 1 ? charged : null;
}

/**
 * Voids a pending hold (a settle does it in settleIfPending). The status guard makes a second void change
 * nothing even if a caller skipped the check.
 */
export function voidHold(conn: SqliteConnection, holdId: string, now: number): boolean {
  return conn.run(`UPDATE holds SET status = 'voided', finalized_at = ? WHERE id = ? AND status = 'pending'`, now, holdId) === 1;
}

/**
 * Moves a pending hold's lease out to `leaseExpiresAt` unless it already runs longer. True if the hold is
 * pending (renewed or already long enough); SQLite counts a matched row as changed even when the value stays.
 */
export function renewLease(conn: SqliteConnection, holdId: string, leaseExpiresAt: number): boolean {
  return (
    conn.run(
      `UPDATE holds SET lease_expires_at = max(lease_expires_at, ?) WHERE id = ? AND status = 'pending'`,
      leaseExpiresAt,
      holdId,
    ) === 1
  );
}

/**
 * Oldest lease first, so a backlog is drained in the order the holds went stale. The partial index on pending
 * holds is named: it holds only them (the requests in flight, and a crash's orphans) and every column read
 * here (schema-v11.ts), where the planner, with no index led by the lease since v11, could otherwise walk the
 * table of every hold ever made. It costs a scan of the pending holds and a sort of the due ones.
 */
export const EXPIRED_HOLDS_SQL = `SELECT id FROM holds INDEXED BY holds_pending_by_owner WHERE status = 'pending' AND lease_expires_at <= ?
       ORDER BY lease_expires_at, created_at, id LIMIT ?`;

export function expiredHoldIds(conn: SqliteConnection, now: number, limit: number): string[] {
  return conn
    .all<{ id: string }>(
      EXPIRED_HOLDS_SQL,
      now,
      limit,
    )
    .map((row) => row.id);
}

/** expiredHoldIds leaving out `skip` (the reaper's holds that failed in this pass, reap-isolated.ts). */
export function expiredHoldIdsExcept(conn: SqliteConnection, now: number, limit: number, skip: readonly string[]): string[] {
  if (skip.length === 0) return expiredHoldIds(conn, now, limit);
  return conn
    .all<{ id: string }>(
      `SELECT id FROM holds INDEXED BY holds_pending_by_owner WHERE status = 'pending' AND lease_expires_at <= ?
         AND id NOT IN (SELECT value FROM json_each(?))
       ORDER BY lease_expires_at, created_at, id LIMIT ?`,
      now,
      JSON.stringify(skip),
      limit,
    )
    .map((row) => row.id);
}

export function countPending(conn: SqliteConnection, accountId: string | undefined): number {
  const row =
    accountId === undefined
      ? conn.get<{ n: number }>(`SELECT count(*) AS n FROM holds WHERE status = 'pending'`)
      : conn.get<{ n: number }>(`SELECT count(*) AS n FROM holds WHERE status = 'pending' AND account_id = ?`, accountId);
  return row?.n ?? 0;
}
