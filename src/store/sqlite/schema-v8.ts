/**
 * Version 8 (issue 18): usage_events_by_time on (created_at, id), for `svc-gateway usage export`
 * (src/store/sqlite/usage.ts, events()). The export reads a period in (created_at, id) order, a page at a
 * time after the previous page's last row; without this index every page would walk the whole table (the
 * one index of usage_events, by owner and day, serves neither every account nor the order), so an export of
 * a million events would read the table a thousand times. With it a page reads its own rows. Settles insert
 * at the index's right edge (created_at is the settle time), one more B-tree insert per settle. The build
 * reads every event once, under the migration's write lock.
 */
export const schemaV8 = `
CREATE INDEX usage_events_by_time ON usage_events (created_at, id);
`;
