import type { Clock } from '../../core/clock.js';
import { StoreError, assertCount } from '../errors.js';
import { SAVED_RESPONSE_COLUMNS, type SavedResponseRow, toSavedResponse, validateSavedResponse } from '../rows.js';
import type { Environment, ResponseStore, SavedResponse } from '../types.js';
import type { SqliteConnection } from './database.js';

/**
 * Stored Responses API answers on SQLite. Writes go through the connection's write path (group commit), so
 * a caller hears of its save only once it is committed; find reads outside it, like the other lookups.
 * Expiry is judged by the store's clock: an expired row is invisible (find, delete) until the purge takes it.
 */
export class SqliteResponseStore implements ResponseStore {
  constructor(
    private readonly conn: SqliteConnection,
    private readonly clock: Clock,
  ) {}

  async save(response: SavedResponse): Promise<void> {
    validateSavedResponse(response);
    return this.conn.write(() => {
      // Checked rather than left to the foreign key, so both stores answer not_found (postgres maps its error).
      if (!this.conn.get<{ id: string }>('SELECT id FROM accounts WHERE id = ?', response.accountId)) {
        throw new StoreError('not_found', `account ${response.accountId} does not exist`);
      }
      this.conn.run(
        `INSERT INTO stored_responses (${SAVED_RESPONSE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (id) DO NOTHING`,
        response.id,
        response.accountId,
        response.environment,
        response.keyId,
        response.createdAt,
        response.expiresAt,
        response.conversation,
        response.output,
        response.body,
      );
    });
  }

  async find(accountId: string, environment: Environment, id: string): Promise<SavedResponse | null> {
    const row = this.conn.get<SavedResponseRow>(
      `SELECT ${SAVED_RESPONSE_COLUMNS} FROM stored_responses
       WHERE id = ? AND account_id = ? AND environment = ? AND expires_at > ?`,
      id,
      accountId,
      environment,
      this.clock.now(),
    );
    return row ? toSavedResponse(row) : null;
  }

  /** An expired row is left to the purge: it is already gone for the caller, so deleting it answers false. */
  async delete(accountId: string, environment: Environment, id: string): Promise<boolean> {
    const now = this.clock.now();
    return this.conn.write(
      () =>
        this.conn.run(
          'DELETE FROM stored_responses WHERE id = ? AND account_id = ? AND environment = ? AND expires_at > ?',
          id,
          accountId,
          environment,
          now,
        ) === 1,
    );
  }

  async purgeExpired(limit: number): Promise<number> {
    assertCount(limit, 'limit', 0);
    const now = this.clock.now();
    return this.conn.write(() =>
      this.conn.run(
        `DELETE FROM stored_responses WHERE rowid IN (
           SELECT rowid FROM stored_responses WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)`,
        now,
        limit,
      ),
    );
  }
}
