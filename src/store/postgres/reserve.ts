import { validateReserve } from '../ledger-rules.js';
import type { HoldStatus, ReserveInput, ReserveResult } from '../types.js';
import type { PgSql } from './database.js';
import { type Instant, instantSql, utcDaySql } from './database-time.js';
import { UNIQUE_VIOLATION, pgError } from './errors.js';
import { findHold } from './holds.js';
import { RESERVE_RACE_SHORT } from './ledger-functions.js';

interface ReserveRow {
  o_outcome: 'ok' | 'key_inactive' | 'daily_limit_exceeded' | 'insufficient_credits';
  o_amount: number | null;
  o_lease_expires_at: number | null;
  o_limit: number | null;
  o_committed: number | null;
  o_available: number | null;
  o_status: HoldStatus | null;
}

/**
 * One statement, svc_reserve_v2 (ledger-functions.ts): it locks the key row, the key's row of the day and
 * the account's spendable grants in the store's fixed order (docs/ledger.md, "Storage (PostgreSQL)") and
 * writes the hold, all in the statement's own transaction. Every refusal leaves no trace. With `now` null
 * (production) the function gets the database's time, so the lease, the day and which grants have expired
 * are the server's, read in the statement (database-time.ts).
 */
export async function reserveHold(sql: PgSql, input: ReserveInput, now: Instant): Promise<ReserveResult> {
  validateReserve(input);
  let row: ReserveRow | undefined;
  try {
    [row] = await sql<ReserveRow[]>`
      SELECT * FROM svc_reserve_v2(${input.holdId}::text, ${input.keyId}::text, ${input.amount}::bigint,
                                   ${input.leaseMs}::bigint, ${utcDaySql(sql, now)}, ${instantSql(sql, now)})`;
  } catch (error) {
    const failure = pgError(error);
    // Credits spent by a concurrent reserve between the function's unlocked check and its locked one.
    if (failure?.code === RESERVE_RACE_SHORT) return { ok: false, reason: 'insufficient_credits', available: Number(failure.detail) };
    // Another instance committed a hold with this id after our check: reserving again returns it.
    if (failure?.code === UNIQUE_VIOLATION && failure.constraint === 'holds_pkey') {
      const hold = await findHold(sql, input.holdId);
      if (hold) return { ok: true, holdId: hold.id, amount: hold.amount, leaseExpiresAt: hold.leaseExpiresAt, status: hold.status };
    }
    throw error;
  }
  if (!row) throw new Error('svc_reserve_v2 returned no row');
  switch (row.o_outcome) {
    case 'ok':
      return {
        ok: true,
        holdId: input.holdId,
        amount: Number(row.o_amount),
        leaseExpiresAt: Number(row.o_lease_expires_at),
        status: row.o_status ?? 'pending',
      };
    case 'key_inactive':
      return { ok: false, reason: 'key_inactive' };
    case 'daily_limit_exceeded':
      return { ok: false, reason: 'daily_limit_exceeded', limit: Number(row.o_limit), committedToday: Number(row.o_committed) };
    case 'insufficient_credits':
      return { ok: false, reason: 'insufficient_credits', available: Number(row.o_available) };
  }
}
