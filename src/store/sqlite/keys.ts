import type { Clock } from '../../core/clock.js';
import { StoreError, tooManyKeys } from '../errors.js';
import { type AccountRow, checkRateLimits, KEY_COLUMNS, type KeyRow, toAccount, toKey } from '../rows.js';
import type { Account, ApiKeyRecord, KeyStore, NewApiKey } from '../types.js';
import type { SqliteConnection } from './database.js';

export class SqliteKeyStore implements KeyStore {
  constructor(
    private readonly conn: SqliteConnection,
    private readonly clock: Clock,
  ) {}

  async createAccount(input: { id: string; name: string | null }): Promise<Account> {
    return this.conn.write(() => {
      if (this.conn.get<AccountRow>('SELECT id FROM accounts WHERE id = ?', input.id)) {
        throw new StoreError('conflict', `account ${input.id} already exists`);
      }
      const createdAt = this.clock.now();
      this.conn.run('INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?)', input.id, input.name, createdAt);
      return { id: input.id, name: input.name, createdAt };
    });
  }

  async getAccount(id: string): Promise<Account | null> {
    const row = this.conn.get<AccountRow>('SELECT id, name, created_at FROM accounts WHERE id = ?', id);
    return row ? toAccount(row) : null;
  }

  async countAccounts(): Promise<number> {
    return this.conn.get<{ n: number }>('SELECT count(*) AS n FROM accounts')?.n ?? 0;
  }

  async insertKey(key: NewApiKey): Promise<ApiKeyRecord> {
    if (key.dailyCreditLimit !== null && (!Number.isSafeInteger(key.dailyCreditLimit) || key.dailyCreditLimit < 0)) {
      throw new StoreError('invalid_input', `dailyCreditLimit must be null or an integer >= 0`);
    }
    checkRateLimits(key);
    return this.conn.write(() => {
      if (!this.conn.get<AccountRow>('SELECT id FROM accounts WHERE id = ?', key.accountId)) {
        throw new StoreError('not_found', `account ${key.accountId} does not exist`);
      }
      if (this.findKeyRow(key.id)) throw new StoreError('conflict', `key ${key.id} already exists`);
      if (key.parentKeyId) this.requireLiveParent(key.parentKeyId, key.accountId);
      // In the same write as the insert: the single writer makes count and insert one step.
      if (key.activeKeyLimit != null) {
        const active = this.conn.get<{ n: number }>('SELECT count(*) AS n FROM api_keys WHERE account_id = ? AND revoked_at IS NULL', key.accountId)?.n ?? 0;
        if (active >= key.activeKeyLimit) throw tooManyKeys(key.accountId, key.activeKeyLimit);
      }
      this.conn.run(
        `INSERT INTO api_keys (${KEY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)`,
        key.id,
        key.accountId,
        key.environment,
        key.name,
        key.salt,
        key.secretHash,
        key.redacted,
        key.dailyCreditLimit,
        this.clock.now(),
        key.rpmLimit ?? null,
        key.tpmLimit ?? null,
        key.parentKeyId ?? null,
      );
      return toKey(this.requireKeyRow(key.id));
    });
  }

  /**
   * Read with the turn's group of writes (database.ts, batched()): every request reads its key, and on its
   * own, between the rest of the request's work, this read cost about three times as much. Not `async`:
   * the group's promise is the answer.
   */
  findKey(id: string): Promise<ApiKeyRecord | null> {
    return this.conn.batched(() => {
      const row = this.findKeyRow(id);
      return row ? toKey(row) : null;
    });
  }

  async listActiveKeys(accountId: string): Promise<ApiKeyRecord[]> {
    return this.conn
      .all<KeyRow>(
        `SELECT ${KEY_COLUMNS} FROM api_keys WHERE account_id = ? AND revoked_at IS NULL ORDER BY created_at, rowid`,
        accountId,
      )
      .map(toKey);
  }

  async revokeKey(id: string): Promise<ApiKeyRecord | null> {
    return this.conn.write(() => {
      // The key and every descendant, in the one write transaction: no child outlives its parent.
      // COALESCE keeps the first revocation time, which is what audits and "revoked since" displays need.
      this.conn.run(
        `WITH RECURSIVE family(id) AS (
           SELECT id FROM api_keys WHERE id = ?
           UNION SELECT k.id FROM api_keys k JOIN family f ON k.parent_key_id = f.id)
         UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id IN (SELECT id FROM family)`,
        id,
        this.clock.now(),
      );
      const row = this.findKeyRow(id);
      return row ? toKey(row) : null;
    });
  }

  /** A child key needs a parent of the same account that is not revoked (a revoked family stays revoked). */
  private requireLiveParent(parentKeyId: string, accountId: string): void {
    const parent = this.findKeyRow(parentKeyId);
    if (!parent || parent.account_id !== accountId || parent.revoked_at !== null) {
      throw new StoreError('not_found', `parent key ${parentKeyId} does not exist or is revoked`);
    }
  }

    private findKeyRow(id: string): KeyRow | undefined {
    return this.conn.get<KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = ?`, id);
  }

  private requireKeyRow(id: string): KeyRow {
    const row = this.findKeyRow(id);
    if (!row) throw new Error(`key ${id} vanished inside its own transaction`);
    return row;
  }
}
