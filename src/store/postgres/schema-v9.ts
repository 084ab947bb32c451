/**
 * Version 9, the same as src/store/sqlite/schema-v9.ts: ledger_entries_by_grant, ledger_entries_by_hold and
 * usage_events_by_owner_day dropped. No statement of the request path reads them; the audit's joins are
 * hash joins without them, and nothing deletes a grant or a hold, so no foreign key check needs to find a
 * row's children. A request (a reserve and its settle) kept seven B-tree entries for them.
 */
export const schemaV9 = `
DROP INDEX IF EXISTS ledger_entries_by_grant;
DROP INDEX IF EXISTS ledger_entries_by_hold;
DROP INDEX IF EXISTS usage_events_by_owner_day;
`;
