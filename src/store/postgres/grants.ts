import { StoreError } from '../errors.js';
import { validateGrant } from '../ledger-rules.js';
import { type GrantRow, toGrant } from '../rows.js';
import type { Balance, Environment, Grant, GrantInput } from '../types.js';
import type { PgQueryable, PgSql } from './database.js';
import { FOREIGN_KEY_VIOLATION, pgError } from './errors.js';

/**
 * One statement in the common cases: it inserts the grant with its journal entry, or returns the grant that
 * already holds this idempotency key (the first grant wins, as it is now: its remaining may have been spent
 * since). The unique (account_id, idempotency_key) index decides between two concurrent deliveries of a
 * webhook: the loser's ON CONFLICT waits for the winner to commit, but its statement snapshot predates that
 * commit, so the loser then reads the winner's grant in a second statement.
 */
export async function insertGrant(sql: PgSql, input: GrantInput, now: number): Promise<{ grant: Grant; created: boolean }> {
  validateGrant(input);
  const rows = await sql<(GrantRow & { created: boolean })[]>`
    WITH inserted AS (
      INSERT INTO credit_grants (account_id, environment, kind, amount, remaining, expires_at, idempotency_key, created_at)
      VALUES (${input.accountId}, ${input.environment}, ${input.kind}, ${input.amount}, ${input.amount},
              ${input.expiresAt}, ${input.idempotencyKey}, ${now})
      ON CONFLICT (account_id, idempotency_key) DO NOTHING
      RETURNING id, account_id, environment, kind, amount, remaining, expires_at, created_at
    ), journal AS (
      INSERT INTO ledger_entries (account_id, environment, kind, amount, grant_id, hold_id, created_at)
      SELECT account_id, environment, 'grant', amount, id, NULL, created_at FROM inserted
    )
    SELECT *, true AS created FROM inserted
    UNION ALL
    SELECT id, account_id, environment, kind, amount, remaining, expires_at, created_at, false AS created
    FROM credit_grants
    WHERE account_id = ${input.accountId} AND idempotency_key = ${input.idempotencyKey}`.catch((error: unknown) => {
    if (pgError(error)?.code === FOREIGN_KEY_VIOLATION) {
      throw new StoreError('not_found', `account ${input.accountId} does not exist`);
    }
    throw error;
  });
  const [row] = rows.length > 0 ? rows : await existingGrant(sql, input);
  if (!row) throw new Error(`grant with idempotency key ${String(input.idempotencyKey)} vanished`);
  return { grant: toGrant(row), created: row.created };
}

async function existingGrant(sql: PgSql, input: GrantInput) {
  return sql<(GrantRow & { created: boolean })[]>`
    SELECT id, account_id, environment, kind, amount, remaining, expires_at, created_at, false AS created
    FROM credit_grants WHERE account_id = ${input.accountId} AND idempotency_key = ${input.idempotencyKey}`;
}

/**
 * Adds each delta to its grant's remaining (negative to hold, positive to give back). The rows are locked
 * first, in id order, because an UPDATE over several rows locks them in whatever order its plan visits
 * them. Deltas must be summed per grant by the caller: UPDATE ... FROM applies one joined row per target.
 * The CHECK (remaining BETWEEN 0 AND amount) is the backstop.
 */
export async function adjustRemaining(tx: PgQueryable, deltas: ReadonlyMap<number, number>): Promise<void> {
  const ids = [...deltas.keys()].sort((a, b) => a - b);
  if (ids.length === 0) return;
  const amounts = ids.map((id) => deltas.get(id) ?? 0);
  await Promise.all([
    tx`SELECT 1 FROM credit_grants WHERE id = ANY(${ids}::bigint[]) ORDER BY id FOR NO KEY UPDATE`,
    tx`UPDATE credit_grants g SET remaining = g.remaining + d.delta
       FROM unnest(${ids}::bigint[], ${amounts}::bigint[]) AS d(id, delta)
       WHERE g.id = d.id`,
  ]);
}

/** The columns of svc_balance_v1 (ledger-functions.ts), which also ends every settle. */
export interface BalanceRow {
  o_earned: number | null;
  o_next_expiry: number | null;
  o_purchased: number | null;
  o_reserved: number | null;
}

export function toBalance(accountId: string, environment: Environment, row: BalanceRow | undefined): Balance {
  return {
    accountId,
    environment,
    earned: row?.o_earned ?? 0,
    earnedNextExpiry: row?.o_next_expiry ?? null,
    purchased: row?.o_purchased ?? 0,
    reserved: row?.o_reserved ?? 0,
  };
}

export async function balanceOf(db: PgQueryable, accountId: string, environment: Environment, now: number): Promise<Balance> {
  const [row] = await db<BalanceRow[]>`SELECT * FROM svc_balance_v1(${accountId}::text, ${environment}::text, ${now}::bigint)`;
  return toBalance(accountId, environment, row);
}
