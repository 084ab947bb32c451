import type { Clock } from '../../core/clock.js';
import { StoreError, assertCount } from '../errors.js';
import { SAVED_RESPONSE_COLUMNS, type SavedResponseRow, toSavedResponse, validateSavedResponse } from '../rows.js';
import type { Environment, ResponseStore, SavedResponse } from '../types.js';
import type { PgSql } from './database.js';
import { type Instant, instantSql } from './database-time.js';
import { FOREIGN_KEY_VIOLATION, guard, pgError } from './errors.js';

/**
 * Stored Responses API answers on PostgreSQL, one statement per call. Expiry is judged by the database's
 * time unless the clock is a test's (database-time.ts), so every instance agrees on when a response is gone.
 * An expired row is invisible (find, delete) until the purge takes it.
 */
export class PostgresResponseStore implements ResponseStore {
  constructor(
    private readonly sql: PgSql,
    private readonly clock: Clock,
  ) {}

  async save(response: SavedResponse): Promise<void> {
    validateSavedResponse(response);
    await guard(
      () => this.sql`
        INSERT INTO stored_responses (${this.columns()})
        VALUES (${response.id}, ${response.accountId}, ${response.environment}, ${response.keyId}, ${response.createdAt},
                ${response.expiresAt}, ${response.conversation}, ${response.output}, ${response.body})
        ON CONFLICT (id) DO NOTHING`,
    ).catch((error: unknown) => {
      if (pgError(error)?.code === FOREIGN_KEY_VIOLATION) {
        throw new StoreError('not_found', `account ${response.accountId} does not exist`);
      }
      throw error;
    });
  }

  async find(accountId: string, environment: Environment, id: string): Promise<SavedResponse | null> {
    const now = instantSql(this.sql, this.decisionInstant());
    const [row] = await guard(
      () => this.sql<SavedResponseRow[]>`
        SELECT ${this.columns()} FROM stored_responses
        WHERE id = ${id} AND account_id = ${accountId} AND environment = ${environment} AND expires_at > ${now}`,
    );
    return row ? toSavedResponse(row) : null;
  }

  /** An expired row is left to the purge: it is already gone for the caller, so deleting it answers false. */
  async delete(accountId: string, environment: Environment, id: string): Promise<boolean> {
    const now = instantSql(this.sql, this.decisionInstant());
    const result = await guard(
      () => this.sql`
        DELETE FROM stored_responses
        WHERE id = ${id} AND account_id = ${accountId} AND environment = ${environment} AND expires_at > ${now}`,
    );
    return result.count === 1;
  }

  /** SKIP LOCKED, as the idempotency purge: purges on several instances take disjoint rows. */
  async purgeExpired(limit: number): Promise<number> {
    assertCount(limit, 'limit', 0);
    if (limit === 0) return 0;
    const now = instantSql(this.sql, this.decisionInstant());
    const result = await guard(
      () => this.sql`
        DELETE FROM stored_responses r USING (
          SELECT id FROM stored_responses
          WHERE expires_at <= ${now}
          ORDER BY expires_at
          LIMIT ${limit}
          FOR UPDATE SKIP LOCKED) d
        WHERE r.id = d.id`,
    );
    return result.count;
  }

  private columns() {
    return this.sql.unsafe(SAVED_RESPONSE_COLUMNS);
  }

  /** A test's hand-moved clock decides; otherwise null: the database's time, read in the statement. */
  private decisionInstant(): Instant {
    return this.clock.manual === true ? this.clock.now() : null;
  }
}
