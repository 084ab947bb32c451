import type { Clock } from '../../core/clock.js';
import { StoreError } from '../errors.js';
import { type AccountRow, KEY_COLUMNS, type KeyRow, toAccount, toKey } from '../rows.js';
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
    return this.conn.write(() => {
      if (!this.conn.get<AccountRow>('SELECT id FROM accounts WHERE id = ?', key.accountId)) {
        throw new StoreError('not_found', `account ${key.accountId} does not exist`);
      }
      if (this.findKeyRow(key.id)) throw new StoreError('conflict', `key ${key.id} already exists`);
      this.conn.run(
        `INSERT INTO api_keys (${KEY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)`,
        key.id,
        key.accountId,
        key.environment,
        key.name,
        key.salt,
        key.secretHash,
        key.redacted,
        key.dailyCreditLimit,
        this.clock.now(),
      );
      return toKey(this.requireKeyRow(key.id));
    });
  }

  async findKey(id: string): Promise<ApiKeyRecord | null> {
    const row = this.findKeyRow(id);
    return row ? toKey(row) : null;
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
      // COALESCE keeps the first revocation time, which is what audits and "revoked since" displays need.
      this.conn.run('UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?', this.clock.now(), id);
      const row = this.findKeyRow(id);
      return row ? toKey(row) : null;
    });
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
