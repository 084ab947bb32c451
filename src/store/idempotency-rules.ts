import { assertCount, invalidInput } from './errors.js';
import type { IdempotencyClaim, IdempotencyClaimInput, StoredResponse } from './types.js';

/**
 * The idempotency records' rules that need no database (Stripe's semantics, docs/ledger.md "Idempotency
 * records"). SQLite decides a claim with decideClaim; PostgreSQL restates it in one statement
 * (postgres/idempotency.ts), and the conformance suite (test/store/cases/idempotency.case.ts) runs on both.
 */

/** Stripe's bound; the key is part of the primary key, so it must stay small. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

export function validateRecordKey(keyId: string, idempotencyKey: string): void {
  if (keyId.length === 0) throw invalidInput('keyId must not be empty');
  if (idempotencyKey.length === 0 || idempotencyKey.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw invalidInput(`idempotencyKey must have 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters, got ${idempotencyKey.length}`);
  }
}

export function validateClaim(input: IdempotencyClaimInput): void {
  validateRecordKey(input.keyId, input.idempotencyKey);
  if (input.fingerprint.length === 0) throw invalidInput('fingerprint must not be empty');
  assertCount(input.leaseMs, 'leaseMs', 1);
  assertCount(input.ttlMs, 'ttlMs', 1);
}

export function validateResponse(response: StoredResponse): void {
  if (!Number.isInteger(response.status) || response.status < 100 || response.status > 599) {
    throw invalidInput(`response.status must be an HTTP status (100-599), got ${String(response.status)}`);
  }
}

/** A record as claim reads it; `response` only for a completed one. */
export interface ExistingRecord {
  fingerprint: string;
  state: 'in_flight' | 'completed';
  leaseExpiresAt: number;
  expiresAt: number;
  response: StoredResponse | null;
}

export type ClaimDecision =
  | { action: 'claim'; takeover: boolean }
  | { action: 'answer'; answer: Exclude<IdempotencyClaim, { status: 'claimed' }> };

/**
 * A record past its ttl counts as absent. A different body under a live key is a mismatch whatever the
 * record's state, so a key stays bound to its first body for its whole life. An in-flight claim blocks until
 * its lease runs out (the owner renews it while alive); then the next claim takes it over.
 */
export function decideClaim(existing: ExistingRecord | null, input: IdempotencyClaimInput, now: number): ClaimDecision {
  if (existing === null || existing.expiresAt <= now) return { action: 'claim', takeover: false };
  if (existing.fingerprint !== input.fingerprint) return { action: 'answer', answer: { status: 'mismatch' } };
  if (existing.state === 'completed') {
    if (existing.response === null) throw new Error('a completed idempotency record without its response');
    return { action: 'answer', answer: { status: 'completed', response: existing.response } };
  }
  if (existing.leaseExpiresAt > now) {
    return { action: 'answer', answer: { status: 'in_flight', retryAfterMs: existing.leaseExpiresAt - now } };
  }
  return { action: 'claim', takeover: true };
}
