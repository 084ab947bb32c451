/**
 * Version 3 (issue 14), the same changes as src/store/sqlite/schema-v3.ts:
 *
 * - usage_events.shortfall_credits: what the upstream's reported usage would have cost beyond the hold,
 *   which caps the charge; existing events get 0. A constant default makes ADD COLUMN a catalog change (no
 *   rewrite), and the CHECK is added NOT VALID as in schema-v2.ts: every existing row holds the default, so
 *   validating could find nothing and would only scan usage_events under the ACCESS EXCLUSIVE lock, which
 *   stalls the settles of the instances still running. New rows are checked all the same. Instances of the
 *   previous release keep settling through svc_settle_v1, whose inserts get the default.
 * - idempotency_records: one row per (API key, Idempotency-Key), src/store/postgres/idempotency.ts and
 *   docs/ledger.md "Idempotency records". No foreign key: a record is a cache of an answer, not part of the
 *   books, and keys are never deleted. The body may be a whole SSE stream (a few MB): BYTEA, which TOAST keeps
 *   out of line and compresses, so the row the claim locks stays small, and which takes any string's UTF-8
 *   bytes (TEXT refuses NUL). The index on expires_at serves purgeExpired; renew leaves it unchanged unless a
 *   lease outlives the ttl, so its updates stay HOT.
 */
export const schemaV3 = `
ALTER TABLE usage_events
  ADD COLUMN shortfall_credits BIGINT NOT NULL DEFAULT 0,
  ADD CONSTRAINT usage_events_shortfall_credits_check CHECK (shortfall_credits >= 0) NOT VALID;

CREATE TABLE idempotency_records (
  key_id                 TEXT NOT NULL,
  idempotency_key        TEXT NOT NULL,
  fingerprint            TEXT NOT NULL,
  state                  TEXT NOT NULL CHECK (state IN ('in_flight', 'completed')),
  claim_token            TEXT NOT NULL,
  takeovers              INTEGER NOT NULL CHECK (takeovers >= 0),
  lease_expires_at       BIGINT NOT NULL,
  expires_at             BIGINT NOT NULL,
  created_at             BIGINT NOT NULL,
  completed_at           BIGINT,
  response_status        INTEGER CHECK (response_status BETWEEN 100 AND 599),
  response_content_type  TEXT,
  response_body          BYTEA,
  PRIMARY KEY (key_id, idempotency_key),
  CHECK ((state = 'completed') = (completed_at IS NOT NULL)),
  CHECK ((state = 'completed') = (response_status IS NOT NULL AND response_content_type IS NOT NULL AND response_body IS NOT NULL))
);
CREATE INDEX idempotency_records_by_expiry ON idempotency_records (expires_at);
`;
