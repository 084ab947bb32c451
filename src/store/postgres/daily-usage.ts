import type { PgQueryable } from './database.js';

export interface DayRelease {
  keyId: string;
  day: string;
  credits: number;
}

/**
 * Gives back what holds did not spend, to the day of each hold's reserve, on every counter that reserve added
 * to: the key's own and its capped ancestors' (svc_key_chain_v1; a key's parent never changes). Rows are
 * locked in (key, day) order first, the one order every transaction uses for them; the CHECK
 * (committed >= 0) catches a double release. Zero releases are dropped and several holds of one key and
 * day are summed.
 */
export async function releaseDays(tx: PgQueryable, releases: readonly DayRelease[]): Promise<void> {
  const totals = new Map<string, DayRelease>();
  for (const release of releases) {
    if (release.credits === 0) continue;
    const id = JSON.stringify([release.keyId, release.day]);
    const total = totals.get(id);
    totals.set(id, { ...release, credits: (total?.credits ?? 0) + release.credits });
  }
  const rows = [...totals.values()];
  if (rows.length === 0) return;
  const keyIds = rows.map((row) => row.keyId);
  const days = rows.map((row) => row.day);
  const credits = rows.map((row) => row.credits);
  const budgets = () => tx`
    SELECT c.o_id AS key_id, r.day, SUM(r.credits) AS credits
    FROM unnest(${keyIds}::text[], ${days}::text[], ${credits}::bigint[]) AS r(key_id, day, credits)
    CROSS JOIN LATERAL svc_key_chain_v1(r.key_id) c
    WHERE c.o_budget
    GROUP BY c.o_id, r.day`;
  await Promise.all([
    tx`WITH d AS (${budgets()})
       SELECT 1 FROM key_daily_usage u JOIN d ON u.key_id = d.key_id AND u.day = d.day
       ORDER BY u.key_id, u.day
       FOR NO KEY UPDATE OF u`,
    tx`WITH d AS (${budgets()})
       UPDATE key_daily_usage u SET committed = u.committed - d.credits
       FROM d WHERE u.key_id = d.key_id AND u.day = d.day`,
  ]);
}
