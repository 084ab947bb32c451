import { randomUUID } from 'node:crypto';
import type { Clock } from '../../core/clock.js';
import { assertCount } from '../errors.js';
import { validateClaim, validateRecordKey, validateResponse } from '../idempotency-rules.js';
import type { IdempotencyClaim, IdempotencyClaimInput, IdempotencyStore, StoredResponse } from '../types.js';
import type { PgSql } from './database.js';
import { type Instant, instantSql } from './database-time.js';
import { guard } from './errors.js';

interface ClaimRow {
  now: number;
  /** Set when this statement claimed the key: the record's takeover count after the claim. */
  claimed_takeovers: number | null;
  /** The record as the statement's snapshot saw it before the claim, if there was one. */
  fingerprint: string | null;
  state: 'in_flight' | 'completed' | null;
  lease_expires_at: number | null;
  expires_at: number | null;
  response_status: number | null;
  response_content_type: string | null;
  response_body: Buffer | null;
}

/** A claim that lost a race retries its statement this many times before answering in_flight. */
const CLAIM_ATTEMPTS = 4;
/** The wait suggested when every attempt lost a race: the key is busy right now. */
const BUSY_RETRY_AFTER_MS = 1_000;

/**
 * Idempotency records on PostgreSQL, one statement per call. A claim is an upsert whose conflict branch
 * applies only where a claim may be made (the record expired, or it is in flight with the same body and its
 * lease ran out: a takeover), so of concurrent claims of one key, on any instances, exactly one writes: the
 * others wait for its row lock, see its claim and change nothing. The record as it was before (read from the
 * statement's snapshot, in the same statement) answers the others: mismatch, completed or in flight. When
 * that snapshot and the row the upsert locked disagree (a claim, release or purge committed in between),
 * the statement runs again. Leases and ttl are judged by the database's time unless the clock is a test's
 * (database-time.ts), so every instance agrees on when a claim may be taken over.
 */
export class PostgresIdempotencyStore implements IdempotencyStore {
  constructor(
    private readonly sql: PgSql,
    private readonly clock: Clock,
  ) {}

  async claim(input: IdempotencyClaimInput): Promise<IdempotencyClaim> {
    validateClaim(input);
    return guard(async () => {
      for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
        const token = randomUUID();
        const row = await this.claimOnce(input, token);
        const answer = answerClaim(row, input, token);
        if (answer !== null) return answer;
      }
      return { status: 'in_flight', retryAfterMs: BUSY_RETRY_AFTER_MS };
    });
  }

  async renew(keyId: string, idempotencyKey: string, leaseMs: number, token?: string): Promise<boolean> {
    validateRecordKey(keyId, idempotencyKey);
    assertCount(leaseMs, 'leaseMs', 1);
    const now = instantSql(this.sql, this.decisionInstant());
    // The record lives at least as long as its claim, so a live claim is never purged or counted as absent.
    const result = await guard(
      () => this.sql`
        UPDATE idempotency_records r
        SET lease_expires_at = t.now + ${leaseMs}::bigint, expires_at = GREATEST(r.expires_at, t.now + ${leaseMs}::bigint)
        FROM (SELECT ${now} AS now) t
        WHERE r.key_id = ${keyId} AND r.idempotency_key = ${idempotencyKey} AND r.state = 'in_flight'
          AND (r.claim_token = ${token ?? null}::text OR (${token ?? null}::text IS NULL AND r.lease_expires_at > t.now))`,
    );
    return result.count === 1;
  }

  async complete(keyId: string, idempotencyKey: string, response: StoredResponse, token?: string): Promise<boolean> {
    validateRecordKey(keyId, idempotencyKey);
    validateResponse(response);
    const body = Buffer.from(response.body, 'utf8');
    const now = instantSql(this.sql, this.decisionInstant());
    const result = await guard(
      () => this.sql`
        UPDATE idempotency_records
        SET state = 'completed', completed_at = ${now}, response_status = ${response.status},
            response_content_type = ${response.contentType}, response_body = ${body}
        WHERE key_id = ${keyId} AND idempotency_key = ${idempotencyKey} AND state = 'in_flight'
          AND (${token ?? null}::text IS NULL OR claim_token = ${token ?? null}::text)`,
    );
    return result.count === 1;
  }

  async release(keyId: string, idempotencyKey: string, token?: string): Promise<boolean> {
    validateRecordKey(keyId, idempotencyKey);
    const now = instantSql(this.sql, this.decisionInstant());
    const result = await guard(
      () => this.sql`
        DELETE FROM idempotency_records
        WHERE key_id = ${keyId} AND idempotency_key = ${idempotencyKey} AND state = 'in_flight'
          AND (claim_token = ${token ?? null}::text OR (${token ?? null}::text IS NULL AND lease_expires_at > ${now}))`,
    );
    return result.count === 1;
  }

  /**
   * SKIP LOCKED: purges on several instances take disjoint rows, and a record being claimed or completed at
   * that moment is left alone (a claim that refreshed it no longer matches once locked).
   */
  async purgeExpired(limit: number): Promise<number> {
    assertCount(limit, 'limit', 0);
    if (limit === 0) return 0;
    const now = instantSql(this.sql, this.decisionInstant());
    const result = await guard(
      () => this.sql`
        DELETE FROM idempotency_records r USING (
          SELECT key_id, idempotency_key FROM idempotency_records
          WHERE expires_at <= ${now}
          ORDER BY expires_at
          LIMIT ${limit}
          FOR UPDATE SKIP LOCKED) d
        WHERE r.key_id = d.key_id AND r.idempotency_key = d.idempotency_key`,
    );
    return result.count;
  }

  private async claimOnce(input: IdempotencyClaimInput, token: string): Promise<ClaimRow | undefined> {
    const now = instantSql(this.sql, this.decisionInstant());
    // excluded.created_at is this statement's instant, which the conflict branch compares with.
    const [row] = await this.sql<ClaimRow[]>`
      WITH clock AS (SELECT ${now} AS now),
      prior AS (
        SELECT r.fingerprint, r.state, r.lease_expires_at, r.expires_at, r.response_status, r.response_content_type,
          CASE WHEN r.state = 'completed' AND r.fingerprint = ${input.fingerprint} AND r.expires_at > c.now
               THEN r.response_body END AS response_body
        FROM idempotency_records r, clock c
        WHERE r.key_id = ${input.keyId} AND r.idempotency_key = ${input.idempotencyKey}
      ),
      claimed AS (
        INSERT INTO idempotency_records AS r (key_id, idempotency_key, fingerprint, state, claim_token, takeovers,
          lease_expires_at, expires_at, created_at)
        SELECT ${input.keyId}, ${input.idempotencyKey}, ${input.fingerprint}, 'in_flight', ${token}, 0,
          c.now + ${input.leaseMs}::bigint, c.now + ${input.ttlMs}::bigint, c.now
        FROM clock c
        ON CONFLICT (key_id, idempotency_key) DO UPDATE SET
          fingerprint = excluded.fingerprint, state = 'in_flight', claim_token = excluded.claim_token,
          takeovers = CASE WHEN r.expires_at <= excluded.created_at THEN 0 ELSE r.takeovers + 1 END,
          lease_expires_at = excluded.lease_expires_at, expires_at = excluded.expires_at,
          created_at = CASE WHEN r.expires_at <= excluded.created_at THEN excluded.created_at ELSE r.created_at END,
          completed_at = NULL, response_status = NULL, response_content_type = NULL, response_body = NULL
        WHERE r.expires_at <= excluded.created_at
           OR (r.state = 'in_flight' AND r.lease_expires_at <= excluded.created_at AND r.fingerprint = excluded.fingerprint)
        RETURNING r.takeovers
      )
      SELECT c.now, (SELECT takeovers FROM claimed) AS claimed_takeovers, p.*
      FROM clock c LEFT JOIN prior p ON true`;
    return row;
  }

  /** A test's hand-moved clock decides; otherwise null: the database's time, read in the statement. */
  private decisionInstant(): Instant {
    return this.clock.manual === true ? this.clock.now() : null;
  }
}

/**
 * The answer to a claim from its statement's row, or null when the snapshot and the locked row disagreed
 * (the statement must run again). Mirrors decideClaim (idempotency-rules.ts) on the record as it was.
 */
function answerClaim(row: ClaimRow | undefined, input: IdempotencyClaimInput, token: string): IdempotencyClaim | null {
  if (row === undefined) throw new Error('the idempotency claim returned no row');
  if (row.claimed_takeovers !== null) return { status: 'claimed', takeover: row.claimed_takeovers > 0, token };
  // Not claimed, yet nothing (live) was there to refuse it: a concurrent claim got in first. Run again.
  if (row.state === null || row.expires_at === null || row.expires_at <= row.now) return null;
  if (row.fingerprint !== input.fingerprint) return { status: 'mismatch' };
  if (row.state === 'completed') {
    if (row.response_status === null || row.response_content_type === null || row.response_body === null) {
      throw new Error('a completed idempotency record without its response');
    }
    return {
      status: 'completed',
      response: { status: row.response_status, contentType: row.response_content_type, body: row.response_body.toString('utf8') },
    };
  }
  if (row.lease_expires_at !== null && row.lease_expires_at > row.now) {
    return { status: 'in_flight', retryAfterMs: row.lease_expires_at - row.now };
  }
  // In flight with a lease that ran out, but another claim took it over first. Run again.
  return null;
}
