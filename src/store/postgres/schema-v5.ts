/**
 * Version 5 (issue 15), the same change as src/store/sqlite/schema-v5.ts: `api_keys.parent_key_id`, the key
 * that created this one through the API (NULL for the operator's keys and every existing key). A nullable
 * column without a default is a catalog change (no rewrite); the foreign key is added NOT VALID (every
 * existing row is NULL, so validating could find nothing and would only scan api_keys under the lock that
 * stalls the reserves of running instances). The partial index serves the cascade of a revocation and is
 * small: only keys created by keys are in it.
 */
export const schemaV5 = `
ALTER TABLE api_keys
  ADD COLUMN parent_key_id TEXT,
  ADD CONSTRAINT api_keys_parent_key_id_fkey FOREIGN KEY (parent_key_id) REFERENCES api_keys(id) NOT VALID;
CREATE INDEX api_keys_by_parent ON api_keys (parent_key_id) WHERE parent_key_id IS NOT NULL;
`;
