/**
 * Version 7: stored_responses, the Responses API answers kept for `previous_response_id`, `item_reference`
 * and GET/DELETE /v1/responses/{id} (src/store/sqlite/responses.ts). Like idempotency_records, a cache of
 * answers, not part of the books. account_id references accounts as every owned table does, so a response
 * never names an account that does not exist; key_id does not: any key of the account may read the response,
 * the key is kept only for audit.
 * A rowid table with the payloads last: the conversation may be large (overflow pages), and the purge and
 * the ownership checks read only the columns before it. The index on expires_at serves purgeExpired.
 */
export const schemaV7 = `
CREATE TABLE stored_responses (
  id            TEXT PRIMARY KEY,
  account_id    TEXT NOT NULL REFERENCES accounts(id),
  environment   TEXT NOT NULL CHECK (environment IN ('live', 'test')),
  key_id        TEXT NOT NULL,
  created_at    INTEGER NOT NULL,
  expires_at    INTEGER NOT NULL,
  conversation  TEXT NOT NULL,
  output        TEXT NOT NULL,
  body          TEXT NOT NULL
);
CREATE INDEX stored_responses_by_expiry ON stored_responses (expires_at);
`;
