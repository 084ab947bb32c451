import { StoreError, assertCount, invalidInput } from './errors.js';
import type {
  Account,
  ApiKeyRecord,
  CreditKind,
  Environment,
  Grant,
  HoldStatus,
  NewApiKey,
  SavedResponse,
  UsageDayRow,
  UsageEventQuery,
  UsageEventRow,
} from './types.js';

/**
 * Rows as both stores read them, and their mapping to the contract's records. The SQLite and PostgreSQL
 * tables have the same columns and the driver wrappers return the same JS types (PostgreSQL's BIGINTs are
 * parsed as numbers, postgres/database.ts), so the mapping is written once and cannot drift between stores.
 */

export interface AccountRow {
  id: string;
  name: string | null;
  created_at: number;
}

export function toAccount(row: AccountRow): Account {
  return { id: row.id, name: row.name, createdAt: row.created_at };
}

export const KEY_COLUMNS =
  'id, account_id, environment, name, salt, secret_hash, redacted, daily_credit_limit, created_at, revoked_at, rpm_limit, tpm_limit, ' +
  'parent_key_id';

export interface KeyRow {
  id: string;
  account_id: string;
  environment: Environment;
  name: string | null;
  salt: string;
  secret_hash: string;
  redacted: string;
  daily_credit_limit: number | null;
  created_at: number;
  revoked_at: number | null;
  rpm_limit: number | null;
  tpm_limit: number | null;
  parent_key_id: string | null;
}

/** A key's rate limits are null (the configured default) or a positive integer; both stores refuse the rest. */
export function checkRateLimits(key: Pick<NewApiKey, 'rpmLimit' | 'tpmLimit'>): void {
  for (const [name, v] of [['rpmLimit', key.rpmLimit], ['tpmLimit', key.tpmLimit]] as const) {
    if (v !== undefined && v !== null && (!Number.isSafeInteger(v) || v < 1)) {
      throw new StoreError('invalid_input', `${name} must be null or an integer >= 1`);
    }
  }
}

export function toKey(row: KeyRow): ApiKeyRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    environment: row.environment,
    name: row.name,
    salt: row.salt,
    secretHash: row.secret_hash,
    redacted: row.redacted,
    dailyCreditLimit: row.daily_credit_limit,
    rpmLimit: row.rpm_limit,
    tpmLimit: row.tpm_limit,
    parentKeyId: row.parent_key_id,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
  };
}

export interface GrantRow {
  id: number;
  account_id: string;
  environment: Environment;
  kind: CreditKind;
  amount: number;
  remaining: number;
  expires_at: number | null;
  created_at: number;
}

export function toGrant(row: GrantRow): Grant {
  return {
    id: String(row.id),
    accountId: row.account_id,
    environment: row.environment,
    kind: row.kind,
    amount: row.amount,
    remaining: row.remaining,
    expiresAt: row.expires_at,
    createdAt: row.created_at,
  };
}

export type { HoldStatus } from './types.js';

/** A hold as settle, void and the reaper need it. */
export interface Hold {
  id: string;
  accountId: string;
  environment: Environment;
  keyId: string;
  day: string;
  amount: number;
  status: HoldStatus;
  leaseExpiresAt: number;
}

export interface HoldRow {
  id: string;
  account_id: string;
  environment: Environment;
  key_id: string;
  day: string;
  amount: number;
  status: HoldStatus;
  lease_expires_at: number;
}

export function toHold(row: HoldRow): Hold {
  return {
    id: row.id,
    accountId: row.account_id,
    environment: row.environment,
    keyId: row.key_id,
    day: row.day,
    amount: row.amount,
    status: row.status,
    leaseExpiresAt: row.lease_expires_at,
  };
}

export interface UsageDailyRow {
  day: string;
  model: string;
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  reasoning_tokens: number;
  credits: number;
}

export function toUsageDay(row: UsageDailyRow): UsageDayRow {
  return {
    day: row.day,
    model: row.model,
    requests: row.requests,
    promptTokens: row.prompt_tokens,
    completionTokens: row.completion_tokens,
    cachedTokens: Number(row.cached_tokens),
    reasoningTokens: Number(row.reasoning_tokens),
    credits: row.credits,
  };
}

/** The usage_events columns an export reads, in UsageEventRow's order. */
export const USAGE_EVENT_COLUMNS =
  'id, request_id, created_at, account_id, environment, key_id, model, routed_provider, routed_model, prompt_tokens, ' +
  'completion_tokens, cached_tokens, reasoning_tokens, credits, shortfall_credits, outcome, latency_ms';

export interface UsageEventDbRow {
  id: number;
  request_id: string;
  created_at: number;
  account_id: string;
  environment: Environment;
  key_id: string;
  model: string;
  routed_provider: string;
  routed_model: string;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  reasoning_tokens: number;
  credits: number;
  shortfall_credits: number;
  outcome: string;
  latency_ms: number;
}

export function toUsageEvent(row: UsageEventDbRow): UsageEventRow {
  return {
    id: Number(row.id),
    requestId: row.request_id,
    at: Number(row.created_at),
    accountId: row.account_id,
    environment: row.environment,
    keyId: row.key_id,
    model: row.model,
    routedProvider: row.routed_provider,
    routedModel: row.routed_model,
    promptTokens: Number(row.prompt_tokens),
    completionTokens: Number(row.completion_tokens),
    cachedTokens: Number(row.cached_tokens),
    reasoningTokens: Number(row.reasoning_tokens),
    credits: Number(row.credits),
    shortfallCredits: Number(row.shortfall_credits),
    outcome: row.outcome,
    latencyMs: Number(row.latency_ms),
  };
}

/** Refuses a malformed export page request before it reaches SQL (both stores). */
export function checkUsageEventQuery(query: UsageEventQuery): void {
  const { startMs, endMs, after, limit } = query;
  if (!Number.isSafeInteger(startMs) || !Number.isSafeInteger(endMs) || endMs < startMs) {
    throw new StoreError('invalid_input', 'startMs and endMs must be integers with startMs <= endMs');
  }
  if (after !== null && (!Number.isSafeInteger(after.at) || !Number.isSafeInteger(after.id))) {
    throw new StoreError('invalid_input', 'after.at and after.id must be integers');
  }
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_USAGE_EVENT_PAGE) {
    throw new StoreError('invalid_input', `limit must be an integer from 1 to ${MAX_USAGE_EVENT_PAGE}`);
  }
}

export const MAX_USAGE_EVENT_PAGE = 10_000;

/**
 * The keyset lower bound of a page: after the previous page's last row, or, for the first page, before
 * every row of startMs (event ids are positive).
 */
export function usageEventCursor(query: UsageEventQuery): { at: number; id: number } {
  return query.after ?? { at: query.startMs, id: 0 };
}

export const SAVED_RESPONSE_COLUMNS = 'id, account_id, environment, key_id, created_at, expires_at, conversation, output, body';

export interface SavedResponseRow {
  id: string;
  account_id: string;
  environment: Environment;
  key_id: string;
  created_at: number;
  expires_at: number;
  conversation: string;
  output: string;
  body: string;
}

export function toSavedResponse(row: SavedResponseRow): SavedResponse {
  return {
    id: row.id,
    accountId: row.account_id,
    environment: row.environment,
    keyId: row.key_id,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    conversation: row.conversation,
    output: row.output,
    body: row.body,
  };
}

/** Both stores refuse the same inputs, before the database sees them (a CHECK error would differ per driver). */
export function validateSavedResponse(response: SavedResponse): void {
  for (const [name, v] of [['id', response.id], ['accountId', response.accountId], ['keyId', response.keyId]] as const) {
    if (v.length === 0) throw invalidInput(`${name} must not be empty`);
  }
  if (response.environment !== 'live' && response.environment !== 'test') {
    throw invalidInput(`environment must be live or test, got ${String(response.environment)}`);
  }
  assertCount(response.createdAt, 'createdAt', 0);
  assertCount(response.expiresAt, 'expiresAt', 0);
}
