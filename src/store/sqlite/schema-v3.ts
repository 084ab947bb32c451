/**
 * Version 3 (issue 14):
 *
 * - usage_events.shortfall_credits: what the upstream's reported usage would have cost beyond the hold,
 *   which caps the charge. The rollups are unchanged. Existing events get 0 (they were charged in full or
 *   nobody measured the difference). SQLite checks the new column's CHECK against the existing rows (all 0).
 * - idempotency_records: one row per (API key, Idempotency-Key), src/store/sqlite/idempotency.ts and
 *   docs/ledger.md "Idempotency records". Not part of the books: no foreign key (keys are never deleted, and
 *   a record is a cache of an answer, not a movement of credits). A rowid table, not WITHOUT ROWID: the
 *   body may be a whole SSE stream (a few MB), which SQLite keeps in overflow pages; it is the last column,
 *   so reading the columns before it (claim, renew) never touches them. The body is a BLOB (UTF-8 bytes),
 *   so any string round-trips, NUL characters included. The index on expires_at serves purgeExpired.
 */
export const schemaV3 = `
ALTER TABLE usage_events ADD COLUMN shortfall_credits INTEGER NOT NULL DEFAULT 0 CHECK (shortfall_credits >= 0);

CREATE TABLE idempotency_records (
  key_id                 TEXT NOT NULL,
  idempotency_key        TEXT NOT NULL,
  fingerprint            TEXT NOT NULL,
  state                  TEXT NOT NULL CHECK (state IN ('in_flight', 'completed')),
  claim_token            TEXT NOT NULL,
  takeovers              INTEGER NOT NULL CHECK (takeovers >= 0),
  lease_expires_at       INTEGER NOT NULL,
  expires_at             INTEGER NOT NULL,
  created_at             INTEGER NOT NULL,
  completed_at           INTEGER,
  response_status        INTEGER CHECK (response_status BETWEEN 100 AND 599),
  response_content_type  TEXT,
  response_body          BLOB,
  PRIMARY KEY (key_id, idempotency_key),
  CHECK ((state = 'completed') = (completed_at IS NOT NULL)),
  CHECK ((state = 'completed') = (response_status IS NOT NULL AND response_content_type IS NOT NULL AND response_body IS NOT NULL))
);
CREATE INDEX idempotency_records_by_expiry ON idempotency_records (expires_at);
`;
