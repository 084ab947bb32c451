import type { Allocation } from '../ledger-rules.js';
import { type Hold, type HoldRow, type HoldStatus, toHold } from '../rows.js';
import type { SqliteConnection } from './database.js';

export type { Hold } from '../rows.js';

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
  allocations.forEach((allocation, seq) => {
    conn.run(
      'INSERT INTO hold_allocations (hold_id, seq, grant_id, amount) VALUES (?, ?, ?, ?)',
      hold.id,
      seq,
      allocation.grantId,
      allocation.amount,
    );
  });
}

/** In allocation order, which is the spending order chosen at reserve time. */
export function allocationsOf(conn: SqliteConnection, holdId: string): Allocation[] {
  return conn
    .all<{ grant_id: number; amount: number }>(
      'SELECT grant_id, amount FROM hold_allocations WHERE hold_id = ? ORDER BY seq',
      holdId,
    )
    .map((row) => ({ grantId: row.grant_id, amount: row.amount }));
}

/** The status guard makes finalizing a second time change nothing even if a caller skipped the check. */
export function finalizeHold(conn: SqliteConnection, holdId: string, settledAmount: number | null, now: number): boolean {
  const status: HoldStatus = settledAmount === null ? 'voided' : 'settled';
  return (
    conn.run(
      `UPDATE holds SET status = ?, settled_amount = ?, finalized_at = ? WHERE id = ? AND status = 'pending'`,
      status,
      settledAmount,
      now,
      holdId,
    ) === 1
  );
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

/** Oldest lease first, so a backlog is drained in the order the holds went stale. */
export function expiredHoldIds(conn: SqliteConnection, now: number, limit: number): string[] {
  return conn
    .all<{ id: string }>(
      `SELECT id FROM holds WHERE status = 'pending' AND lease_expires_at <= ?
       ORDER BY lease_expires_at, created_at, id LIMIT ?`,
      now,
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
