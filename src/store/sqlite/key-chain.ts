import type { SqliteConnection } from './database.js';

/**
 * A key and its ancestors (parent_key_id up to a key the operator created), one row each, `depth` 0 for the
 * key itself. One `?`: the key id. Shared by the reserve (caps and revocation of the chain) and the releases,
 * which must give credits back to the very counters the reserve added to.
 */
export const KEY_CHAIN_SQL = `WITH RECURSIVE chain(id, parent_key_id, daily_credit_limit, revoked_at, depth) AS (
    SELECT id, parent_key_id, daily_credit_limit, revoked_at, 0 FROM api_keys WHERE id = ?
    UNION ALL
    SELECT k.id, k.parent_key_id, k.daily_credit_limit, k.revoked_at, c.depth + 1
    FROM api_keys k JOIN chain c ON k.id = c.parent_key_id)`;

/**
 * Whose day counters a reserve of this key adds to: the key's own, and each capped ancestor's, which thereby
 * counts the spend of its whole family (docs/ledger.md, "Key families"). Uncapped ancestors keep only their
 * own spend: they have no cap to protect, and their counters would otherwise become a hot row shared by
 * every key they created.
 */
export const BUDGET_KEYS_WHERE = 'depth = 0 OR daily_credit_limit IS NOT NULL';

export interface ChainKey {
  id: string;
  account_id: string;
  environment: 'live' | 'test';
  daily_credit_limit: number | null;
  revoked_at: number | null;
  depth: number;
}

/** A key's own row as keyChain's first member, with its parent. */
export type KeyRowForChain = ChainKey & { parent_key_id: string | null };

/**
 * The key (first) and its ancestors, nearest first, from the key's own row: most keys have no parent, and
 * their chain is that row, without the recursive walk (it costs about three times as much inside every
 * reserve).
 */
export function chainFrom(conn: SqliteConnection, key: KeyRowForChain): ChainKey[] {
  if (key.parent_key_id === null) return [key];
  return conn.all<ChainKey>(
    `${KEY_CHAIN_SQL}
     SELECT c.id, k.account_id, k.environment, c.daily_credit_limit, c.revoked_at, c.depth
     FROM chain c JOIN api_keys k ON k.id = c.id ORDER BY c.depth`,
    key.id,
  );
}
