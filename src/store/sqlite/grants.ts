import { StoreError } from '../errors.js';
import { type SpendableGrant, bySpendingOrder, validateGrant } from '../ledger-rules.js';
import { type GrantRow, toGrant } from '../rows.js';
import type { Balance, CreditKind, Environment, Grant, GrantInput } from '../types.js';
import type { SqliteConnection } from './database.js';
import { appendEntry } from './journal.js';

const GRANT_COLUMNS = 'id, account_id, environment, kind, amount, remaining, expires_at, created_at';

/** Must run inside an IMMEDIATE transaction: the idempotency check and the insert are one step. */
export function insertGrant(conn: SqliteConnection, input: GrantInput, now: number): { grant: Grant; created: boolean } {
  validateGrant(input);
  if (input.idempotencyKey !== null) {
    const existing = conn.get<GrantRow>(
      `SELECT ${GRANT_COLUMNS} FROM credit_grants WHERE account_id = ? AND idempotency_key = ?`,
      input.accountId,
      input.idempotencyKey,
    );
    // The grant as it is now (its remaining may have been spent since): the first grant wins, whatever
    // this second request asked for.
    if (existing) return { grant: toGrant(existing), created: false };
  }
  if (!conn.get<{ id: string }>('SELECT id FROM accounts WHERE id = ?', input.accountId)) {
    throw new StoreError('not_found', `account ${input.accountId} does not exist`);
  }
  const id = conn.insert(
    `INSERT INTO credit_grants (account_id, environment, kind, amount, remaining, expires_at, idempotency_key, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    input.accountId,
    input.environment,
    input.kind,
    input.amount,
    input.amount,
    input.expiresAt,
    input.idempotencyKey,
    now,
  );
  appendEntry(
    conn,
    { accountId: input.accountId, environment: input.environment, kind: 'grant', amount: input.amount, grantId: id, holdId: null },
    now,
  );
  const grant: Grant = {
    id: String(id),
    accountId: input.accountId,
    environment: input.environment,
    kind: input.kind,
    amount: input.amount,
    remaining: input.amount,
    expiresAt: input.expiresAt,
    createdAt: now,
  };
  return { grant, created: true };
}

/**
 * Grants a new hold may draw from, in spending order (ledger-rules.ts). A grant expires at expires_at exactly.
 * The rows come back as one JSON array in one row: libsql reads several rows through an iterator (a native
 * object and a 100-slot array a call), about 3 us more than one row's read (docs/performance.md, thirteenth
 * session), and an account has a grant or a few. Credits are safe integers, which JSON numbers carry exactly.
 */
export function spendableGrants(conn: SqliteConnection, accountId: string, environment: Environment, now: number): SpendableGrant[] {
  const row = conn.get<{ grants: string }>(
    `SELECT json_group_array(json_array(id, kind, remaining, expires_at, created_at)) AS grants FROM credit_grants
     WHERE account_id = ? AND environment = ? AND remaining > 0 AND (expires_at IS NULL OR expires_at > ?)`,
    accountId,
    environment,
    now,
  );
  const rows = JSON.parse(row?.grants ?? '[]') as [number, CreditKind, number, number | null, number][];
  return rows
    .map(([grantId, kind, remaining, expiresAt, createdAt]) => ({ grantId, kind, remaining, expiresAt, createdAt }))
    .sort(bySpendingOrder);
}

/** Moves credits between a grant's remaining and a hold; the CHECK (remaining >= 0) is the backstop. */
export function adjustRemaining(conn: SqliteConnection, grantId: number, delta: number): void {
  conn.run('UPDATE credit_grants SET remaining = remaining + ? WHERE id = ?', delta, grantId);
}

/** One statement (grants and pending holds), since it runs inside every settle. */
export function balanceOf(conn: SqliteConnection, accountId: string, environment: Environment, now: number): Balance {
  const row = conn.get<{ earned: number; next_expiry: number | null; purchased: number; reserved: number }>(
    `SELECT
       COALESCE(SUM(CASE WHEN kind = 'earned' AND expires_at > ?1 THEN remaining END), 0) AS earned,
       MIN(CASE WHEN kind = 'earned' AND expires_at > ?1 AND remaining > 0 THEN expires_at END) AS next_expiry,
       COALESCE(SUM(CASE WHEN kind = 'purchased' THEN remaining END), 0) AS purchased,
       (SELECT COALESCE(SUM(amount), 0) FROM holds
        WHERE account_id = ?2 AND environment = ?3 AND status = 'pending') AS reserved
     FROM credit_grants WHERE account_id = ?2 AND environment = ?3`,
    now,
    accountId,
    environment,
  );
  return {
    accountId,
    environment,
    earned: row?.earned ?? 0,
    earnedNextExpiry: row?.next_expiry ?? null,
    purchased: row?.purchased ?? 0,
    reserved: row?.reserved ?? 0,
  };
}
