/**
 * Version 4 (issue 15), the same change as src/store/sqlite/schema-v4.ts: per-key rate limits,
 * `api_keys.rpm_limit` and `api_keys.tpm_limit`, NULL meaning the configured default. Nullable columns
 * without a default are a catalog change (no table rewrite); their CHECKs hold for every existing row (all
 * NULL), so they are added NOT VALID like those of schema-v2/v3: validating would only scan api_keys under
 * the ACCESS EXCLUSIVE lock, which stalls the reserves of running instances (they lock key rows). New and
 * updated rows are checked all the same.
 */
export const schemaV4 = `
ALTER TABLE api_keys
  ADD COLUMN rpm_limit BIGINT,
  ADD COLUMN tpm_limit BIGINT,
  ADD CONSTRAINT api_keys_rpm_limit_check CHECK (rpm_limit IS NULL OR rpm_limit >= 1) NOT VALID,
  ADD CONSTRAINT api_keys_tpm_limit_check CHECK (tpm_limit IS NULL OR tpm_limit >= 1) NOT VALID;
`;
