/**
 * Version 7, the same table as src/store/sqlite/schema-v7.ts: stored_responses, the Responses API answers
 * kept for `previous_response_id`, `item_reference` and GET/DELETE /v1/responses/{id}
 * (src/store/postgres/responses.ts). A cache of answers, not part of the books; the foreign key to accounts
 * as on every owned table, none on key_id (kept for audit only). The payloads are TEXT, not BYTEA as
 * idempotency bodies are: they are JSON the gateway serialized, which escapes NUL (the one character TEXT
 * refuses); TOAST keeps them out of line, so the purge and the ownership checks stay on small rows. Running
 * instances wait on nothing but account creation: the foreign key locks accounts against writes (not against
 * the key-share locks reserves take) until the migration commits. The index on expires_at serves purgeExpired.
 */
export const schemaV7 = `
CREATE TABLE stored_responses (
  id            TEXT PRIMARY KEY,
  account_id    TEXT NOT NULL REFERENCES accounts(id),
  environment   TEXT NOT NULL CHECK (environment IN ('live', 'test')),
  key_id        TEXT NOT NULL,
  created_at    BIGINT NOT NULL,
  expires_at    BIGINT NOT NULL,
  conversation  TEXT NOT NULL,
  output        TEXT NOT NULL,
  body          TEXT NOT NULL
);
CREATE INDEX stored_responses_by_expiry ON stored_responses (expires_at);
`;
