/**
 * Version 2: the journal gets the `expire` kind (the reaper writes off what is left of expired earned
 * grants, src/store/sqlite/expire.ts), and expire entries, like grant entries, belong to no hold.
 *
 * SQLite cannot change a CHECK constraint in place, so ledger_entries is rebuilt the way the SQLite
 * documentation prescribes (https://www.sqlite.org/lang_altertable.html#otheralter): create the new
 * table, copy every row with its id, drop the old table, rename the new one, then recreate the indexes and
 * the append-only triggers (dropped with the old table). Runs inside migrate()'s IMMEDIATE transaction, so
 * a failure leaves the old table as it was. Foreign keys stay on: no table references ledger_entries, and
 * the copied rows satisfied the same foreign keys already. Dropping the table does not fire its DELETE
 * trigger (SQLite drops triggers first). The AUTOINCREMENT high-water mark is carried over, so ids are
 * never reused, even one whose insert was rolled back after taking the sequence.
 *
 * credit_grants_expirable lists only the earned grants that still have credits, so the reap, which holds
 * the write lock, finds the expired ones without scanning every grant that expired long ago. SQLite has
 * no HOT updates to lose by indexing `remaining` (unlike PostgreSQL, see src/store/postgres/schema-v2.ts).
 */
export const schemaV2 = `
CREATE TABLE ledger_entries_v2 (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  account_id   TEXT NOT NULL REFERENCES accounts(id),
  environment  TEXT NOT NULL CHECK (environment IN ('live', 'test')),
  kind         TEXT NOT NULL CHECK (kind IN ('grant', 'reserve', 'settle', 'release', 'void', 'expire')),
  amount       INTEGER NOT NULL CHECK (amount > 0),
  grant_id     INTEGER NOT NULL REFERENCES credit_grants(id),
  hold_id      TEXT REFERENCES holds(id),
  created_at   INTEGER NOT NULL,
  CHECK ((kind IN ('grant', 'expire')) = (hold_id IS NULL))
);
INSERT INTO ledger_entries_v2 (id, account_id, environment, kind, amount, grant_id, hold_id, created_at)
  SELECT id, account_id, environment, kind, amount, grant_id, hold_id, created_at FROM ledger_entries ORDER BY id;
DELETE FROM sqlite_sequence WHERE name = 'ledger_entries_v2';
INSERT INTO sqlite_sequence (name, seq) SELECT 'ledger_entries_v2', seq FROM sqlite_sequence WHERE name = 'ledger_entries';
DROP TABLE ledger_entries;
ALTER TABLE ledger_entries_v2 RENAME TO ledger_entries;

CREATE INDEX ledger_entries_by_grant ON ledger_entries (grant_id);
CREATE INDEX ledger_entries_by_hold ON ledger_entries (hold_id) WHERE hold_id IS NOT NULL;
CREATE TRIGGER ledger_entries_no_update BEFORE UPDATE ON ledger_entries
BEGIN SELECT RAISE(ABORT, 'ledger_entries is append-only'); END;
CREATE TRIGGER ledger_entries_no_delete BEFORE DELETE ON ledger_entries
BEGIN SELECT RAISE(ABORT, 'ledger_entries is append-only'); END;

CREATE INDEX credit_grants_expirable ON credit_grants (expires_at) WHERE kind = 'earned' AND remaining > 0;
`;
