import { randomUUID } from 'node:crypto';
import type { Clock } from '../../core/clock.js';
import { assertCount } from '../errors.js';
import { type ExistingRecord, decideClaim, validateClaim, validateRecordKey, validateResponse } from '../idempotency-rules.js';
import type { IdempotencyClaim, IdempotencyClaimInput, IdempotencyStore, StoredResponse } from '../types.js';
import type { SqliteConnection } from './database.js';

interface RecordRow {
  fingerprint: string;
  state: 'in_flight' | 'completed';
  lease_expires_at: number;
  expires_at: number;
  response_status: number | null;
  response_content_type: string | null;
}

/**
 * Idempotency records on SQLite. Every write is one step of the connection's write path (group commit):
 * the read, the decision (decideClaim, idempotency-rules.ts) and the write run under the write lock, so two
 * claims of one key are serialized, and the caller hears its claim only once it is committed.
 */
export class SqliteIdempotencyStore implements IdempotencyStore {
  constructor(
    private readonly conn: SqliteConnection,
    private readonly clock: Clock,
  ) {}

  async claim(input: IdempotencyClaimInput): Promise<IdempotencyClaim> {
    validateClaim(input);
    const now = this.clock.now();
    return this.conn.write((): IdempotencyClaim => {
      const existing = this.find(input, now);
      const decision = decideClaim(existing, input, now);
      if (decision.action === 'answer') return decision.answer;
      const token = randomUUID();
      // A takeover keeps the record's creation time and counts itself; anything else starts a new record.
      this.conn.run(
        `INSERT INTO idempotency_records AS r (key_id, idempotency_key, fingerprint, state, claim_token, takeovers,
           lease_expires_at, expires_at, created_at)
         VALUES (?1, ?2, ?3, 'in_flight', ?4, 0, ?5, ?6, ?7)
         ON CONFLICT (key_id, idempotency_key) DO UPDATE SET
           fingerprint = excluded.fingerprint, state = 'in_flight', claim_token = excluded.claim_token,
           takeovers = CASE WHEN ?8 THEN r.takeovers + 1 ELSE 0 END,
           lease_expires_at = excluded.lease_expires_at, expires_at = excluded.expires_at,
           created_at = CASE WHEN ?8 THEN r.created_at ELSE excluded.created_at END,
           completed_at = NULL, response_status = NULL, response_content_type = NULL, response_body = NULL`,
        input.keyId,
        input.idempotencyKey,
        input.fingerprint,
        token,
        now + input.leaseMs,
        now + input.ttlMs,
        now,
        decision.takeover ? 1 : 0,
      );
      return { status: 'claimed', takeover: decision.takeover, token };
    });
  }

  async renew(keyId: string, idempotencyKey: string, leaseMs: number, token?: string): Promise<boolean> {
    validateRecordKey(keyId, idempotencyKey);
    assertCount(leaseMs, 'leaseMs', 1);
    const now = this.clock.now();
    const lease = now + leaseMs;
    // The record lives at least as long as its claim, so a live claim is never purged or counted as absent.
    return this.conn.write(
      () =>
        this.conn.run(
          `UPDATE idempotency_records SET lease_expires_at = ?3, expires_at = max(expires_at, ?3)
           WHERE key_id = ?1 AND idempotency_key = ?2 AND state = 'in_flight'
             AND (claim_token = ?4 OR (?4 IS NULL AND lease_expires_at > ?5))`,
          keyId,
          idempotencyKey,
          lease,
          token ?? null,
          now,
        ) === 1,
    );
  }

  async complete(keyId: string, idempotencyKey: string, response: StoredResponse, token?: string): Promise<boolean> {
    validateRecordKey(keyId, idempotencyKey);
    validateResponse(response);
    const now = this.clock.now();
    const body = Buffer.from(response.body, 'utf8');
    return this.conn.write(
      () =>
        this.conn.run(
          `UPDATE idempotency_records
           SET state = 'completed', completed_at = ?3, response_status = ?4, response_content_type = ?5, response_body = ?6
           WHERE key_id = ?1 AND idempotency_key = ?2 AND state = 'in_flight' AND (?7 IS NULL OR claim_token = ?7)`,
          keyId,
          idempotencyKey,
          now,
          response.status,
          response.contentType,
          body,
          token ?? null,
        ) === 1,
    );
  }

  async release(keyId: string, idempotencyKey: string, token?: string): Promise<boolean> {
    validateRecordKey(keyId, idempotencyKey);
    const now = this.clock.now();
    return this.conn.write(
      () =>
        this.conn.run(
          `DELETE FROM idempotency_records
           WHERE key_id = ?1 AND idempotency_key = ?2 AND state = 'in_flight'
             AND (claim_token = ?3 OR (?3 IS NULL AND lease_expires_at > ?4))`,
          keyId,
          idempotencyKey,
          token ?? null,
          now,
        ) === 1,
    );
  }

  async purgeExpired(limit: number): Promise<number> {
    assertCount(limit, 'limit', 0);
    const now = this.clock.now();
    return this.conn.write(() =>
      this.conn.run(
        `DELETE FROM idempotency_records WHERE rowid IN (
           SELECT rowid FROM idempotency_records WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)`,
        now,
        limit,
      ),
    );
  }

  /**
   * The body (maybe megabytes, in overflow pages) is read only for a live completed record with the caller's
   * fingerprint: the one case that replays it.
   */
  private find(input: IdempotencyClaimInput, now: number): ExistingRecord | null {
    const row = this.conn.get<RecordRow>(
      `SELECT fingerprint, state, lease_expires_at, expires_at, response_status, response_content_type
       FROM idempotency_records WHERE key_id = ? AND idempotency_key = ?`,
      input.keyId,
      input.idempotencyKey,
    );
    if (!row) return null;
    let response: StoredResponse | null = null;
    const replayed = row.state === 'completed' && row.fingerprint === input.fingerprint && row.expires_at > now;
    if (replayed && row.response_status !== null && row.response_content_type !== null) {
      const stored = this.conn.get<{ response_body: Buffer }>(
        'SELECT response_body FROM idempotency_records WHERE key_id = ? AND idempotency_key = ?',
        input.keyId,
        input.idempotencyKey,
      );
      if (!stored) throw new Error('idempotency record vanished inside its write transaction');
      response = { status: row.response_status, contentType: row.response_content_type, body: stored.response_body.toString('utf8') };
    }
    return {
      fingerprint: row.fingerprint,
      state: row.state,
      leaseExpiresAt: row.lease_expires_at,
      expiresAt: row.expires_at,
      response,
    };
  }
}
