/**
 * Version 5 (issue 15): key families. `api_keys.parent_key_id` is the key that created this one through the
 * API (NULL for the operator's keys, which every existing key is). A key shares the daily budget of each
 * capped ancestor and is revoked with it (docs/api.md, "Key families"). The index serves the cascade of a
 * revocation, which walks a key's children. The day counter of a capped key then counts its family's
 * spend (docs/ledger.md); existing keys have no family, so their counters already mean that.
 */
export const schemaV5 = `
ALTER TABLE api_keys ADD COLUMN parent_key_id TEXT REFERENCES api_keys(id);
CREATE INDEX api_keys_by_parent ON api_keys (parent_key_id) WHERE parent_key_id IS NOT NULL;
`;
