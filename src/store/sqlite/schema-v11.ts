/**
 * Version 11: holds_pending_by_lease dropped, and the reaper served by holds_pending_by_owner.
 *
 * holds_pending_by_lease served only the reaper's listing of holds whose lease ran out, and every request
 * paid for it twice: an entry written by its reserve and removed by its settle, a page of the WAL each time
 * (one of the twenty a request wrote, bench/wal-pages.mjs). holds_pending_by_owner holds the same rows (the
 * pending holds: the requests in flight and a crash's orphans, however large the table of past holds grows)
 * and is written at every reserve and settle anyway; with the lease, creation time and id as its last
 * columns it answers the reaper's listing alone (holds.ts, expiredHoldIds: a scan of the pending holds and a
 * sort, about 30 ms for 200,000 of them, where a scan that looked up each row took 0.8 s), and its first
 * columns still answer the balance's sum of what is held. Store CPU a request: about 5% less with one
 * in flight (docs/performance.md, nineteenth session). Rebuilding the index reads only the pending holds.
 */
export const schemaV11 = `
DROP INDEX IF EXISTS holds_pending_by_lease;
DROP INDEX holds_pending_by_owner;
CREATE INDEX holds_pending_by_owner ON holds (account_id, environment, amount, lease_expires_at, created_at, id) WHERE status = 'pending';
`;
