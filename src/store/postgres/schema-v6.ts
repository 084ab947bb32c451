/**
 * Version 6 (issue 16), the same change as src/store/sqlite/schema-v6.ts: `cached_tokens` (of the prompt,
 * read from the provider's cache) and `reasoning_tokens` (of the completion, spent reasoning) on
 * usage_events and usage_daily; existing rows get 0. Constant defaults make ADD COLUMN a catalog change (no
 * rewrite), and the CHECKs are added NOT VALID as in schema-v3.ts: every existing row holds the default, so
 * validating could find nothing and would only scan the tables under the ACCESS EXCLUSIVE lock, stalling the
 * settles of running instances. New rows are checked all the same. Instances of the previous release keep
 * settling through svc_settle_v2, whose inserts get the defaults (ledger-functions.ts).
 */
export const schemaV6 = `
ALTER TABLE usage_events
  ADD COLUMN cached_tokens BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN reasoning_tokens BIGINT NOT NULL DEFAULT 0,
  ADD CONSTRAINT usage_events_cached_tokens_check CHECK (cached_tokens >= 0) NOT VALID,
  ADD CONSTRAINT usage_events_reasoning_tokens_check CHECK (reasoning_tokens >= 0) NOT VALID;
ALTER TABLE usage_daily
  ADD COLUMN cached_tokens BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN reasoning_tokens BIGINT NOT NULL DEFAULT 0,
  ADD CONSTRAINT usage_daily_cached_tokens_check CHECK (cached_tokens >= 0) NOT VALID,
  ADD CONSTRAINT usage_daily_reasoning_tokens_check CHECK (reasoning_tokens >= 0) NOT VALID;
`;
