import type { Clock } from '../../core/clock.js';
import { StoreError } from '../errors.js';
import { type AccountRow, KEY_COLUMNS, type KeyRow, toAccount, toKey } from '../rows.js';
import type { Account, ApiKeyRecord, KeyStore, NewApiKey } from '../types.js';
import type { PgSql } from './database.js';
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
    const [row] = await guard(
      () => this.sql<KeyRow[]>`
        INSERT INTO api_keys (id, account_id, environment, name, salt, secret_hash, redacted, daily_credit_limit, created_at)
        VALUES (${key.id}, ${key.accountId}, ${key.environment}, ${key.name}, ${key.salt}, ${key.secretHash},
                ${key.redacted}, ${key.dailyCreditLimit}, ${this.clock.now()})
        ON CONFLICT (id) DO NOTHING
        RETURNING ${this.keyColumns()}`,
    ).catch((error: unknown) => {
      if (pgError(error)?.code === FOREIGN_KEY_VIOLATION) {
        throw new StoreError('not_found', `account ${key.accountId} does not exist`);
      }
      throw error;
    });
    if (!row) throw new StoreError('conflict', `key ${key.id} already exists`);
    return toKey(row);
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
   * The UPDATE queues on the key row with the reserves (which lock it too): it waits for those ahead of it
   * and those behind it then read the revocation, so once it returns no instance can still admit a request
   * with this key (see docs/ledger.md).
   */
  async revokeKey(id: string): Promise<ApiKeyRecord | null> {
    // COALESCE keeps the first revocation time, which is what audits and "revoked since" displays need.
    const [row] = await guard(
      () => this.sql<KeyRow[]>`
        UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ${this.clock.now()}) WHERE id = ${id}
        RETURNING ${this.keyColumns()}`,
    );
    return row ? toKey(row) : null;
  }
}
