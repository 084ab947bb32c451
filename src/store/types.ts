import type { LedgerAudit } from './ledger-audit.js';

/**
 * The Store, split by concern. Every implementation (SQLite now, PostgreSQL next) passes the same
 * conformance suite in test/store/. Times are epoch milliseconds; days are UTC `YYYY-MM-DD` strings.
 * Implementations take their Clock at construction, so no method takes a `now` argument.
 */

export type Environment = 'live' | 'test';
export type CreditKind = 'earned' | 'purchased';

export interface Account {
  id: string;
  name: string | null;
  createdAt: number;
}

export interface ApiKeyRecord {
  /** Public id, e.g. `key_3fA9...`; embedded in the secret for lookup. */
  id: string;
  accountId: string;
  environment: Environment;
  name: string | null;
  /** Salt and HMAC-SHA256 digest of the secret, both base64url. The secret itself is never stored. */
  salt: string;
  secretHash: string;
  /** First and last characters of the secret, for display only (`svc_live_AbC...xYz1`). */
  redacted: string;
  dailyCreditLimit: number | null;
  /** Requests per minute this key may make; null: the configured default (rate_limits.rpm), if any. */
  rpmLimit: number | null;
  /** Tokens (prompt estimate + output bound) per minute; null: the configured default (rate_limits.tpm). */
  tpmLimit: number | null;
  /**
   * The key that created this one through the API; null for keys the operator created (CLI, admin API).
   * A key shares the daily budget of every capped ancestor and is revoked with any of them (docs/api.md).
   */
  parentKeyId: string | null;
  createdAt: number;
  revokedAt: number | null;
}

export type NewApiKey = Omit<ApiKeyRecord, 'createdAt' | 'revokedAt' | 'rpmLimit' | 'tpmLimit' | 'parentKeyId'> &
  Partial<Pick<ApiKeyRecord, 'rpmLimit' | 'tpmLimit' | 'parentKeyId'>> & {
    /**
     * Refuse (`limit_exceeded`) when the account already has this many active keys, counted and inserted in
     * one atomic step. Absent or null: no bound (the operator's own keys).
     */
    activeKeyLimit?: number | null;
  };

export interface KeyStore {
  createAccount(input: { id: string; name: string | null }): Promise<Account>;
  getAccount(id: string): Promise<Account | null>;
  countAccounts(): Promise<number>;
  insertKey(key: NewApiKey): Promise<ApiKeyRecord>;
  /** Looks a key up by public id, revoked or not: the caller decides what a revoked key means. */
  findKey(id: string): Promise<ApiKeyRecord | null>;
  /** Active (not revoked) keys of an account, oldest first. */
  listActiveKeys(accountId: string): Promise<ApiKeyRecord[]>;
  /**
   * Marks the key and all its descendants revoked, in one atomic step. Idempotent: revoking twice keeps the
   * first revocation time. Null if no such key. Inserting a key under a revoked parent fails (`not_found`).
   */
  revokeKey(id: string): Promise<ApiKeyRecord | null>;
}

export interface GrantInput {
  accountId: string;
  environment: Environment;
  kind: CreditKind;
  amount: number;
  /** Required for earned credits, null for purchased. */
  expiresAt: number | null;
  /** A second grant with the same key is not applied again; the first grant is returned. */
  idempotencyKey: string | null;
}

export interface Grant {
  id: string;
  accountId: string;
  environment: Environment;
  kind: CreditKind;
  amount: number;
  /** Credits of this grant neither spent nor held. */
  remaining: number;
  expiresAt: number | null;
  createdAt: number;
}

export interface Balance {
  accountId: string;
  environment: Environment;
  /** Unexpired earned credits available for new holds, summed over grants. */
  earned: number;
  /** The soonest expiry among unexpired earned grants with remaining credits; null if none. */
  earnedNextExpiry: number | null;
  purchased: number;
  /** Credits currently held by pending reservations (not included in earned/purchased). */
  reserved: number;
}

export type HoldStatus = 'pending' | 'settled' | 'voided';

export interface ReserveInput {
  /** Chosen by the caller; doubles as idempotency key (reserving the same id twice holds once). */
  holdId: string;
  keyId: string;
  amount: number;
  /** How long the hold lives before the reaper may void it. */
  leaseMs: number;
}

export type ReserveResult =
  /**
   * `status` is the hold's state now: `pending` for a new hold, and for an existing one (the same hold id
   * reserved again, e.g. after a lost reply) whatever it became; only a pending hold can still be settled.
   */
  | { ok: true; holdId: string; amount: number; leaseExpiresAt: number; status: HoldStatus }
  | { ok: false; reason: 'insufficient_credits'; available: number }
  | { ok: false; reason: 'daily_limit_exceeded'; limit: number; committedToday: number }
  | { ok: false; reason: 'key_inactive' };

export interface UsageRecord {
  requestId: string;
  /** The alias the client asked for (prices come from it). */
  model: string;
  routedModel: string;
  routedProvider: string;
  promptTokens: number;
  completionTokens: number;
  /**
   * Of promptTokens, those the provider read from its prompt cache; of completionTokens, those the model
   * spent reasoning (schema v6). Absent: 0. Cached input may be priced differently by the provider.
   */
  cachedTokens?: number;
  reasoningTokens?: number;
  /** How the request ended, e.g. `completed`, `client_closed`, `upstream_error`. */
  outcome: string;
  latencyMs: number;
  /**
   * Credits the upstream's reported usage would have cost beyond the hold, which caps the charge (integer
   * >= 0; 0 when the hold covered it). Stored on the usage event so the operator sees the loss.
   */
  shortfallCredits: number;
}

export interface SettleInput {
  holdId: string;
  /** The actual cost. The store posts min(amount, held) and releases the rest. */
  amount: number;
  usage: UsageRecord;
}

export type SettleResult =
  | { status: 'settled'; charged: number; balance: Balance }
  /**
   * The hold was already settled or voided: nothing changed (settle is idempotent). `charged` is what the
   * hold was settled for (0 if it was voided), so a settle retried after its reply was lost recovers the
   * first outcome.
   */
  | { status: 'already_final'; charged: number; voided: boolean; balance: Balance }
  | { status: 'unknown_hold' };

export interface LedgerStore {
  grant(input: GrantInput): Promise<{ grant: Grant; created: boolean }>;
  /**
   * One atomic step: the key and its ancestors are active, the key's daily cap (UTC day of the clock) and
   * the cap of each capped ancestor are not exceeded by the committed (held + settled) credits of the
   * capped key's whole family (itself and its descendants) plus this amount, and the account's environment has enough
   * available credits. Holds are allocated to grants: earned soonest-expiry first, then purchased.
   */
  reserve(input: ReserveInput): Promise<ReserveResult>;
  /** Posts the cost, releases the rest and records the usage event, exactly once. */
  settle(input: SettleInput): Promise<SettleResult>;
  /** Releases the whole hold without charging. Returns false if the hold was already final or unknown. */
  void(holdId: string): Promise<boolean>;
  /**
   * Pushes a pending hold's lease out to (now + leaseMs) by the store's time (the database's own on
   * PostgreSQL), never shortening it, so the reaper leaves a hold alone while its completion lives; also
   * rescues a hold whose lease ran out but that the reaper has not voided yet. One statement, no journal
   * entry (no credit moves). False if the hold is unknown or already final.
   */
  renewHold(holdId: string, leaseMs: number): Promise<boolean>;
  balance(accountId: string, environment: Environment): Promise<Balance>;
  /**
   * Voids pending holds whose lease ran out, then writes off up to `limit` expired earned grants (an `expire`
   * journal entry each), both judged by the store's time: the database's own on PostgreSQL (docs/ledger.md,
   * "Time"). Returns the number of holds voided.
   */
  reapExpiredHolds(limit: number): Promise<number>;
  /** Pending holds count, for tests and operators. */
  countPendingHolds(accountId?: string): Promise<number>;
  /**
   * Recomputes every grant, hold, usage rollup and daily counter from the append-only journal and reports
   * each disagreement (src/store/ledger-audit.ts). Read-only; run it while traffic flows or stopped.
   */
  audit(): Promise<LedgerAudit>;
}

export interface UsageQuery {
  accountId: string;
  environment: Environment;
  /** Inclusive UTC days, `YYYY-MM-DD`. */
  startDay: string;
  endDay: string;
  model: string | null;
}

export interface UsageDayRow {
  day: string;
  model: string;
  requests: number;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  reasoningTokens: number;
  credits: number;
}

/**
 * A page of usage events for export (`svc-gateway usage export`): keyset pagination in (at, id) order, so a
 * whole period is read page by page without an OFFSET and without holding it all in memory.
 */
export interface UsageEventQuery {
  /** Settle times `startMs <= at < endMs` (epoch ms; the CLI passes whole UTC days). */
  startMs: number;
  endMs: number;
  /** Null: every account (or every environment). */
  accountId: string | null;
  environment: Environment | null;
  /** The last row of the previous page: only rows after it in (at, id) order; null for the first page. */
  after: { at: number; id: number } | null;
  /** Page size, an integer from 1 to 10,000. */
  limit: number;
}

/** One usage event: one settled request (a voided hold has none), as recorded by settle. */
export interface UsageEventRow {
  /** The event's own id: a positive integer, unique in the database, the tie-breaker of the order. */
  id: number;
  /** The gateway's request id (the `x-request-id` of the request that was charged). */
  requestId: string;
  /** When the request settled (epoch ms): the instant that dates it, so its UTC day is its /v1/usage day. */
  at: number;
  accountId: string;
  environment: Environment;
  keyId: string;
  /** The alias the client asked for. */
  model: string;
  routedProvider: string;
  /** `<provider>/<upstream model>` of the target that answered (`<provider>/none` if none did). */
  routedModel: string;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  reasoningTokens: number;
  /** Credits charged. */
  credits: number;
  shortfallCredits: number;
  outcome: string;
  latencyMs: number;
}

export interface UsageStore {
  /** Rows per (day, model) in the range, from the daily rollup maintained at settle time. */
  rollup(query: UsageQuery): Promise<UsageDayRow[]>;
  /**
   * Usage events settled in [startMs, endMs), of one account and environment or all, in (at, id) order,
   * at most `limit` of them after `after`. Served by the index on (created_at, id) (schema v8), so each
   * page costs its own rows however far into the period it starts. Pass the last row's (at, id) as the
   * next page's `after`; a page shorter than `limit` is the last.
   */
  events(query: UsageEventQuery): Promise<UsageEventRow[]>;
}

/** An answer kept to be replayed to a retry (a non-streaming body, or a whole SSE stream). */
export interface StoredResponse {
  status: number;
  contentType: string;
  body: string;
}

export interface IdempotencyClaimInput {
  keyId: string;
  idempotencyKey: string;
  /** The caller's digest of the request body: a different body under the same key is a mismatch. */
  fingerprint: string;
  /** How long an in-flight claim blocks others before it may be taken over (renewed while alive). */
  leaseMs: number;
  /** How long a completed answer is kept (24 h). */
  ttlMs: number;
}

export type IdempotencyClaim =
  /**
   * The caller owns the key and runs the request. `takeover`: an earlier claim's lease ran out (its owner
   * died) and this one replaces it. `token` identifies this claim: pass it to renew, complete and release
   * so that a former owner (alive after all, but taken over) cannot act on the new owner's claim.
   */
  | { status: 'claimed'; takeover: boolean; token: string }
  | { status: 'in_flight'; retryAfterMs: number }
  | { status: 'mismatch' }
  | { status: 'completed'; response: StoredResponse };

/**
 * Idempotency keys of API requests (Stripe's semantics): per API key and idempotency key, one record that
 * is first in flight (claimed, with a lease) and then completed (the answer to replay) until its ttl from
 * the claim. A record whose ttl passed counts as absent. src/store/idempotency-rules.ts has the decisions.
 * Without `token`, renew and release act only on a claim whose lease has not run out, and complete on any
 * in-flight claim of the key.
 */
export interface IdempotencyStore {
  claim(input: IdempotencyClaimInput): Promise<IdempotencyClaim>;
  /** Keeps an in-flight claim alive (false if it is no longer ours to renew). */
  renew(keyId: string, idempotencyKey: string, leaseMs: number, token?: string): Promise<boolean>;
  /** Stores the answer to replay and ends the claim; kept until ttl. False if the claim was not ours (nothing stored). */
  complete(keyId: string, idempotencyKey: string, response: StoredResponse, token?: string): Promise<boolean>;
  /**
   * The request ended with nothing worth replaying (refused, failed before any answer): a retry may run it.
   * Deletes the claim; false if it was not ours.
   */
  release(keyId: string, idempotencyKey: string, token?: string): Promise<boolean>;
  /** Deletes records past their ttl, oldest first, at most `limit`; returns how many. */
  purgeExpired(limit: number): Promise<number>;
}

/**
 * A Responses API answer kept for `previous_response_id`, `item_reference` and GET/DELETE
 * /v1/responses/{id} (src/responses/). Visible only to keys of its account and environment, and only
 * until `expiresAt`. The payloads are the door's JSON, opaque to the store.
 */
export interface SavedResponse {
  id: string;
  accountId: string;
  environment: Environment;
  /** The key that created it (kept for audit; any key of the account may read it). */
  keyId: string;
  createdAt: number;
  expiresAt: number;
  /** The whole conversation up to and including this answer, in the internal form (JSON). */
  conversation: string;
  /** The answer's output items as the Responses API shows them (JSON array); item ids are looked up here. */
  output: string;
  /** The response object as returned to the client (JSON), for GET. */
  body: string;
}

export interface ResponseStore {
  /** Inserts; an id already present is left as it is (a retried save). */
  save(response: SavedResponse): Promise<void>;
  /** The response of this account and environment, or null when absent, expired or another account's. */
  find(accountId: string, environment: Environment, id: string): Promise<SavedResponse | null>;
  /** Deletes it; false when there was nothing of this account and environment to delete. */
  delete(accountId: string, environment: Environment, id: string): Promise<boolean>;
  /** Deletes responses past their expiry, oldest first, at most `limit`; returns how many. */
  purgeExpired(limit: number): Promise<number>;
}

export interface Store {
  readonly keys: KeyStore;
  readonly ledger: LedgerStore;
  readonly usage: UsageStore;
  readonly idempotency: IdempotencyStore;
  readonly responses: ResponseStore;
  /** Applies pending versioned migrations; safe to call on every start. */
  migrate(): Promise<void>;
  /**
   * The database server's time (epoch ms). Gateways align their clock to it (src/core/aligned-clock.ts),
   * so leases, expiries and UTC days mean the same instant on every instance. Embedded stores answer the
   * local clock.
   */
  serverTime(): Promise<number>;
  close(): Promise<void>;
}
