import type { Environment } from '../types.js';
import type { SqliteConnection } from './database.js';
import { adjustRemaining, writeGrantDeltas } from './grants.js';
import { appendEntry } from './journal.js';

/**
 * Writes off what is left of up to `limit` expired earned grants, in id order: one `expire` entry each and
 * `remaining` to 0. Part of the reap, inside its IMMEDIATE transaction and after its voids, so credits a
 * reaped hold gives back to an expired grant are written off in the same reap. Credits a settle or void
 * gives back later to an already expired grant raise its `remaining` again; it is then due again and the
 * next reap writes them off. Expired credits never counted in a balance, so no balance changes here.
 * The partial index credit_grants_expirable (schema-v2.ts) holds just the earned grants with credits left,
 * so the reap, which holds the write lock, never scans the grants that expired long ago. INDEXED BY pins
 * it: without statistics (we never run ANALYZE) the planner prefers walking the whole table in id order to
 * skip the sort, about 50 ms per million grants under the write lock.
 */
export function expireGrants(conn: SqliteConnection, now: number, limit: number): void {
  // The reap shares its transaction with other writes, and its voids gave credits back: the rows must
  // hold all of it before they are read.
  writeGrantDeltas(conn);
  const due = conn.all<{ id: number; account_id: string; environment: Environment; remaining: number }>(
    `SELECT id, account_id, environment, remaining FROM credit_grants INDEXED BY credit_grants_expirable
     WHERE kind = 'earned' AND remaining > 0 AND expires_at <= ?
     ORDER BY id LIMIT ?`,
    now,
    limit,
  );
  for (const grant of due) {
    adjustRemaining(conn, { accountId: grant.account_id, environment: grant.environment }, grant.id, -grant.remaining);
    appendEntry(
      conn,
      { accountId: grant.account_id, environment: grant.environment, kind: 'expire', amount: grant.remaining, grantId: grant.id, holdId: null },
      now,
    );
  }
}
