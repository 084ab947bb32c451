/**
 * Version 11: holds_pending_by_lease dropped. It served only the reaper's listing of holds whose lease ran
 * out, and every request paid for it twice: an entry written by its reserve and removed by its settle, a
 * page of the WAL each time (one of the twenty a request writes, bench/wal-pages.mjs). The reaper now walks
 * holds_pending_by_owner, which holds the same rows (the pending holds, as many as the requests in flight,
 * however large the table of past holds grows), and sorts them itself (holds.ts, expiredHoldIds).
 * Measured: about 7% of the store's CPU a request with one in flight, 2% with 32 (docs/performance.md,
 * nineteenth session).
 */
export const schemaV11 = `
DROP INDEX IF EXISTS holds_pending_by_lease;
`;
