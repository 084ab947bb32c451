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
  createdAt: number;
  revokedAt: number | null;
}

export type NewApiKey = Omit<ApiKeyRecord, 'createdAt' | 'revokedAt'>;

export interface KeyStore {
  createAccount(input: { id: string; name: string | null }): Promise<Account>;
  getAccount(id: string): Promise<Account | null>;
  countAccounts(): Promise<number>;
  insertKey(key: NewApiKey): Promise<ApiKeyRecord>;
  /** Looks a key up by public id, revoked or not: the caller decides what a revoked key means. */
  findKey(id: string): Promise<ApiKeyRecord | null>;
  /** Active (not revoked) keys of an account, oldest first. */
  listActiveKeys(accountId: string): Promise<ApiKeyRecord[]>;
  /** Marks the key revoked. Idempotent: revoking twice keeps the first revocation time. Null if no such key. */
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

export interface ReserveInput {
  /** Chosen by the caller; doubles as idempotency key (reserving the same id twice holds once). */
  holdId: string;
  keyId: string;
  amount: number;
  /** How long the hold lives before the reaper may void it. */
  leaseMs: number;
}

export type ReserveResult =
  | { ok: true; holdId: string; amount: number; leaseExpiresAt: number }
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
  /** How the request ended, e.g. `completed`, `client_closed`, `upstream_error`. */
  outcome: string;
  latencyMs: number;
}

export interface SettleInput {
  holdId: string;
  /** The actual cost. The store posts min(amount, held) and releases the rest. */
  amount: number;
  usage: UsageRecord;
}

export type SettleResult =
  | { status: 'settled'; charged: number; balance: Balance }
  /** The hold was already settled or voided: nothing changed (settle is idempotent). */
  | { status: 'already_final'; balance: Balance }
  | { status: 'unknown_hold' };

export interface LedgerStore {
  grant(input: GrantInput): Promise<{ grant: Grant; created: boolean }>;
  /**
   * One atomic step: the key is active, the key's daily cap (UTC day of the clock) is not exceeded by
   * committed (held + settled) credits plus this amount, and the account's environment has enough
   * available credits. Holds are allocated to grants: earned soonest-expiry first, then purchased.
   */
  reserve(input: ReserveInput): Promise<ReserveResult>;
  /** Posts the cost, releases the rest and records the usage event, exactly once. */
  settle(input: SettleInput): Promise<SettleResult>;
  /** Releases the whole hold without charging. Returns false if the hold was already final or unknown. */
  void(holdId: string): Promise<boolean>;
  balance(accountId: string, environment: Environment): Promise<Balance>;
  /**
   * Voids pending holds whose lease ran out, then writes off up to `limit` expired earned grants (an `expire`
   * journal entry each). Returns the number of holds voided.
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
  credits: number;
}

export interface UsageStore {
  /** Rows per (day, model) in the range, from the daily rollup maintained at settle time. */
  rollup(query: UsageQuery): Promise<UsageDayRow[]>;
}

export interface Store {
  readonly keys: KeyStore;
  readonly ledger: LedgerStore;
  readonly usage: UsageStore;
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
