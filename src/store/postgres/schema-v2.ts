/**
 * Version 2: the journal gets the `expire` kind (the reaper writes off what is left of expired earned
 * grants, src/store/postgres/expire.ts), and expire entries, like grant entries, belong to no hold. The
 * two CHECK constraints are dropped and added again under their v1 names.
 *
 * NOT VALID: the new constraints are implied by the old ones (they only admit one more kind), and the
 * journal's rows never change (append-only triggers), so validating them could find nothing. Skipping the
 * check keeps the ACCESS EXCLUSIVE lock this takes on ledger_entries (which blocks every reserve and settle
 * of the instances still running) as short as the DDL, instead of one scan of the whole journal. New rows
 * are checked all the same.
 *
 * No index for the reap's search for expired grants: `remaining` is in no index so its updates on every
 * reserve and settle stay HOT (schema-v1.ts), and an index on expires_at alone does not help once most
 * earned grants lie in the past. The search is a sequential scan of credit_grants that locks only the
 * rows it expires (about 90 ms per million grants on a small machine; docs/ledger.md).
 */
export const schemaV2 = `
ALTER TABLE ledger_entries
  DROP CONSTRAINT ledger_entries_kind_check,
  ADD CONSTRAINT ledger_entries_kind_check
    CHECK (kind IN ('grant', 'reserve', 'settle', 'release', 'void', 'expire')) NOT VALID,
  DROP CONSTRAINT ledger_entries_check,
  ADD CONSTRAINT ledger_entries_check
    CHECK ((kind IN ('grant', 'expire')) = (hold_id IS NULL)) NOT VALID;
`;
