/**
 * Version 9: the indexes no statement of the request path reads, dropped, because every settle and reserve
 * paid to keep them.
 *
 * - ledger_entries_by_grant and ledger_entries_by_hold served only the audit (`svc-gateway ledger verify`,
 *   src/store/ledger-audit.ts), which joins the journal to grants and to holds once, offline; SQLite builds
 *   a transient index for such a join on its own (automatic indexing). Each journal row kept two B-tree
 *   entries for it: about 6 us of the store's 150 us a request (docs/performance.md, tenth session).
 * - usage_events_by_owner_day served the usage endpoint before the rollup (usage_daily) did; since
 *   version 8 the export reads usage_events_by_time, and no statement reads it.
 *
 * No promise rested on them: the journal is append-only by its triggers, a usage event's hold is unique by
 * its own constraint (usage_events.hold_id UNIQUE), and nothing deletes a grant or a hold whose children a
 * foreign key would need to find.
 */
export const schemaV9 = `
DROP INDEX IF EXISTS ledger_entries_by_grant;
DROP INDEX IF EXISTS ledger_entries_by_hold;
DROP INDEX IF EXISTS usage_events_by_owner_day;
`;
