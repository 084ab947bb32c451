import type { Clock } from '../../core/clock.js';
import { StoreError, tooManyKeys } from '../errors.js';
import { type AccountRow, checkRateLimits, KEY_COLUMNS, type KeyRow, toAccount, toKey } from '../rows.js';
import type { Account, ApiKeyRecord, KeyStore, NewApiKey } from '../types.js';
import { type PgQueryable, type PgSql, transaction } from './database.js';
import { FOREIGN_KEY_VIOLATION, guard, pgError } from './errors.js';

/**
 * Each method is one statement, so it needs no explicit transaction: conflicts are detected by
 * ON CONFLICT and the foreign keys rather than by a read-then-write that another instance could race.
 */
export class PostgresKeyStore implements KeyStore {
  constructor(
    private readonly sql: PgSql,
    private readonly clock: Clock,
  ) {}

  /** The column list as a fragment: spliced in as SQL text, not sent as a parameter. */
  private keyColumns() {
    return this.sql.unsafe(KEY_COLUMNS);
  }

  async createAccount(input: { id: string; name: string | null }): Promise<Account> {
    const createdAt = this.clock.now();
    const rows = await guard(
      () => this.sql<AccountRow[]>`
        INSERT INTO accounts (id, name, created_at) VALUES (${input.id}, ${input.name}, ${createdAt})
        ON CONFLICT (id) DO NOTHING
        RETURNING id`,
    );
    if (rows.length === 0) throw new StoreError('conflict', `account ${input.id} already exists`);
    return { id: input.id, name: input.name, createdAt };
  }

  async getAccount(id: string): Promise<Account | null> {
    const [row] = await guard(() => this.sql<AccountRow[]>`SELECT id, name, created_at FROM accounts WHERE id = ${id}`);
    return row ? toAccount(row) : null;
  }

  async countAccounts(): Promise<number> {
    const [row] = await guard(() => this.sql<{ n: number }[]>`SELECT count(*) AS n FROM accounts`);
    return row?.n ?? 0;
  }

  async insertKey(key: NewApiKey): Promise<ApiKeyRecord> {
    if (key.dailyCreditLimit !== null && (!Number.isSafeInteger(key.dailyCreditLimit) || key.dailyCreditLimit < 0)) {
      throw new StoreError('invalid_input', `dailyCreditLimit must be null or an integer >= 0`);
    }
    checkRateLimits(key);
    const limit = key.activeKeyLimit;
    if (limit == null) return this.insertIn(this.sql, key);
    // Count and insert in one transaction, serialized per account by an advisory lock taken first (a lock of
    // its own: nothing else takes it, so it cannot join a deadlock with the ledger's row locks).
    return guard(() =>
      transaction(this.sql, async (tx) => {
        await tx`SELECT pg_advisory_xact_lock(hashtextextended(${`svc_api_keys:${key.accountId}`}, 0))`;
        const [row] = await tx<{ n: number }[]>`SELECT count(*)::int AS n FROM api_keys WHERE account_id = ${key.accountId} AND revoked_at IS NULL`;
        if ((row?.n ?? 0) >= limit) throw tooManyKeys(key.accountId, limit);
        return this.insertIn(tx, key);
      }),
    );
  }

  private async insertIn(db: PgQueryable, key: NewApiKey): Promise<ApiKeyRecord> {
    if (key.parentKeyId) return this.insertChildKey(db, key, key.parentKeyId);
    const [row] = await guard(
      () => db<KeyRow[]>`
        INSERT INTO api_keys (id, account_id, environment, name, salt, secret_hash, redacted, daily_credit_limit, created_at,
                              rpm_limit, tpm_limit)
        VALUES (${key.id}, ${key.accountId}, ${key.environment}, ${key.name}, ${key.salt}, ${key.secretHash},
                ${key.redacted}, ${key.dailyCreditLimit}, ${this.clock.now()}, ${key.rpmLimit ?? null}, ${key.tpmLimit ?? null})
        ON CONFLICT (id) DO NOTHING
        RETURNING ${db.unsafe(KEY_COLUMNS)}`,
    ).catch((error: unknown) => {
      if (pgError(error)?.code === FOREIGN_KEY_VIOLATION) {
        throw new StoreError('not_found', `account ${key.accountId} does not exist`);
      }
      throw error;
    });
    if (!row) throw new StoreError('conflict', `key ${key.id} already exists`);
    return toKey(row);
  }

  /**
   * One statement: the parent is read FOR SHARE, so a revocation of it in progress (which holds its row)
   * is waited for and then seen, and a revocation that starts later waits for this insert and then revokes
   * the new child with the rest of the family (revokeKey).
   */
  private async insertChildKey(db: PgQueryable, key: NewApiKey, parentKeyId: string): Promise<ApiKeyRecord> {
    const [row] = await guard(
      () => db<KeyRow[]>`
        WITH parent AS (
          SELECT p.id FROM api_keys p
          WHERE p.id = ${parentKeyId} AND p.account_id = ${key.accountId} AND p.revoked_at IS NULL
          FOR SHARE)
        INSERT INTO api_keys (id, account_id, environment, name, salt, secret_hash, redacted, daily_credit_limit, created_at,
                              rpm_limit, tpm_limit, parent_key_id)
        SELECT ${key.id}, ${key.accountId}, ${key.environment}, ${key.name}, ${key.salt}, ${key.secretHash},
               ${key.redacted}, ${key.dailyCreditLimit}, ${this.clock.now()}, ${key.rpmLimit ?? null}, ${key.tpmLimit ?? null},
               parent.id
        FROM parent
        ON CONFLICT (id) DO NOTHING
        RETURNING ${db.unsafe(KEY_COLUMNS)}`,
    );
    if (row) return toKey(row);
    if (await this.findKey(key.id)) throw new StoreError('conflict', `key ${key.id} already exists`);
    throw new StoreError('not_found', `parent key ${parentKeyId} does not exist or is revoked`);
  }

  async findKey(id: string): Promise<ApiKeyRecord | null> {
    const [row] = await guard(() => this.sql<KeyRow[]>`SELECT ${this.keyColumns()} FROM api_keys WHERE id = ${id}`);
    return row ? toKey(row) : null;
  }

  async listActiveKeys(accountId: string): Promise<ApiKeyRecord[]> {
    const rows = await guard(
      () => this.sql<KeyRow[]>`
        SELECT ${this.keyColumns()} FROM api_keys
        WHERE account_id = ${accountId} AND revoked_at IS NULL
        ORDER BY created_at, seq`,
    );
    return rows.map(toKey);
  }

  /**
   * The key and its descendants, locked level by level from the top, the order the reserves lock a key's
   * ancestors in (svc_reserve_v2), so the two cannot deadlock. Each lock queues with the reserves of that key:
   * it waits for those ahead of it and those behind it then read the revocation, so once this returns no
   * instance can still admit a request with any key of the family (see docs/ledger.md). A child being
   * inserted holds its parent FOR SHARE: once the parent is locked here, the next level's read (a new
   * snapshot) sees it; one inserted later finds its parent revoked and is refused (insertChildKey).
   */
  async revokeKey(id: string): Promise<ApiKeyRecord | null> {
    return guard(() =>
      transaction(this.sql, async (tx) => {
        const [root] = await tx<{ id: string }[]>`SELECT id FROM api_keys WHERE id = ${id} FOR NO KEY UPDATE`;
        if (!root) return null;
        const family = [id];
        for (let level = [id]; level.length > 0; ) {
          const children = await tx<{ id: string }[]>`
            SELECT id FROM api_keys WHERE parent_key_id = ANY(${level}::text[]) ORDER BY id FOR NO KEY UPDATE`;
          level = children.map((child) => child.id);
          family.push(...level);
        }
        // COALESCE keeps the first revocation time, which is what audits and "revoked since" displays need.
        await tx`UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ${this.clock.now()}) WHERE id = ANY(${family}::text[])`;
        const [row] = await tx<KeyRow[]>`SELECT ${tx.unsafe(KEY_COLUMNS)} FROM api_keys WHERE id = ${id}`;
        return row ? toKey(row) : null;
      }),
    );
  }
}
