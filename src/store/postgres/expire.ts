import type { Environment } from '../types.js';
import type { PgQueryable } from './database.js';
import { adjustRemaining } from './grants.js';
import { appendEntries } from './journal.js';

/**
 * Writes off what is left of up to `limit` expired earned grants, in id order: one `expire` entry each and
 * `remaining` to 0. The last step of a reap, after its voids, so credits a reaped hold gives back to an
 * expired grant are written off in the same transaction. Credits a settle or void gives back later to an
 * already expired grant raise its `remaining` again; it is then due again and the next reap writes them off.
 * Expired credits never counted in a balance, so no balance changes here.
 *
 * SKIP LOCKED: a grant locked by another reaper (or by a settle giving credits back to it) is left to the
 * next reap, so reapers on several instances never expire one grant twice and never wait here. The locked
 * read returns the row's latest committed `remaining` (READ COMMITTED rechecks a row changed since the
 * statement began), which is exactly what is written off. Not waiting also keeps the lock order safe: the
 * grants this takes after finalize() may have lower ids than those it already holds.
 */
export async function expireGrants(tx: PgQueryable, now: number, limit: number): Promise<void> {
  const due = await tx<{ id: number; account_id: string; environment: Environment; remaining: number }[]>`
    SELECT id, account_id, environment, remaining FROM credit_grants
    WHERE kind = 'earned' AND remaining > 0 AND expires_at <= ${now}
    ORDER BY id
    LIMIT ${limit}
    FOR NO KEY UPDATE SKIP LOCKED`;
  if (due.length === 0) return;
  await Promise.all([
    adjustRemaining(tx, new Map(due.map((grant) => [grant.id, -grant.remaining]))),
    appendEntries(
      tx,
      due.map((grant) => ({
        accountId: grant.account_id,
        environment: grant.environment,
        kind: 'expire' as const,
        amount: grant.remaining,
        grantId: grant.id,
        holdId: null,
      })),
      now,
    ),
  ]);
}
