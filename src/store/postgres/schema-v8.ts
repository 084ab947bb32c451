/**
 * Version 8 (issue 18), the same index as src/store/sqlite/schema-v8.ts: usage_events_by_time on
 * (created_at, id), for `svc-gateway usage export` (src/store/postgres/usage.ts, events()): a page of the
 * export is one range scan of its own rows after the previous page's last (created_at, id), where without it
 * each page would scan usage_events whole. Settles insert at the index's right edge.
 * The migration's transaction cannot build it CONCURRENTLY: CREATE INDEX holds a SHARE lock on usage_events
 * while it reads the table, and the settles of instances still running wait for it (seconds for tens of
 * millions of events). An operator with a large table can build it beforehand without blocking writes,
 * `CREATE INDEX CONCURRENTLY usage_events_by_time ON usage_events (created_at, id);` (check that it is valid
 * in pg_index), and this migration then finds it and does nothing (IF NOT EXISTS).
 */
export const schemaV8 = `
CREATE INDEX IF NOT EXISTS usage_events_by_time ON usage_events (created_at, id);
`;
