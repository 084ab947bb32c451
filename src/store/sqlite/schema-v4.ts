/**
 * Version 4 (issue 15): per-key rate limits, `api_keys.rpm_limit` (requests per minute) and
 * `api_keys.tpm_limit` (tokens per minute). NULL: the configured default (`rate_limits.rpm` / `.tpm`), if
 * any. Existing keys get NULL, so they keep whatever default the operator configures. The limits are
 * enforced outside the database (src/ratelimit/), so the columns are only read with the key.
 */
export const schemaV4 = `
ALTER TABLE api_keys ADD COLUMN rpm_limit INTEGER CHECK (rpm_limit IS NULL OR rpm_limit >= 1);
ALTER TABLE api_keys ADD COLUMN tpm_limit INTEGER CHECK (tpm_limit IS NULL OR tpm_limit >= 1);
`;
