import type { PgQueryable } from './database.js';

export type DayCharge = { ok: true } | { ok: false; limit: number; committed: number };

/**
 * Adds a reserve's credits to its key and UTC day if the key's cap allows, in one statement that also
 * locks the day's row: concurrent reserves of the same key queue here and each sees the committed total
 * of the ones before it, so the cap holds across instances. The first reserve of a day inserts the row;
 * a refused one changes nothing (the INSERT ... SELECT yields no row, or the conditional UPDATE skips it
 * while still locking it), and the committed total is then read for the refusal.
 */
export async function chargeDay(
  tx: PgQueryable,
  keyId: string,
  day: string,
  credits: number,
  limit: number | null,
): Promise<DayCharge> {
  const charged = await tx`
    INSERT INTO key_daily_usage AS u (key_id, day, committed)
    SELECT ${keyId}::text, ${day}::text, ${credits}::bigint WHERE ${limit}::bigint IS NULL OR ${credits} <= ${limit}::bigint
    ON CONFLICT (key_id, day) DO UPDATE SET committed = u.committed + excluded.committed
      WHERE ${limit}::bigint IS NULL OR u.committed + excluded.committed <= ${limit}::bigint
    RETURNING 1`;
  // Without a limit the statement always writes; the check keeps the types honest.
  if (charged.length === 1 || limit === null) return { ok: true };
  const [row] = await tx<{ committed: number }[]>`
    SELECT committed FROM key_daily_usage WHERE key_id = ${keyId} AND day = ${day}`;
  return { ok: false, limit, committed: row?.committed ?? 0 };
}

export interface DayRelease {
  keyId: string;
  day: string;
  credits: number;
}

/**
 * Gives back what holds did not spend, to the day of each hold's reserve. Rows are locked in (key, day)
 * order first, the one order every transaction uses for them; the CHECK (committed >= 0) catches a double
 * release. Zero releases are dropped and several holds of one key and day are summed.
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
  await Promise.all([
    tx`SELECT 1 FROM key_daily_usage u JOIN unnest(${keyIds}::text[], ${days}::text[]) AS d(key_id, day)
         ON u.key_id = d.key_id AND u.day = d.day
       ORDER BY u.key_id, u.day
       FOR NO KEY UPDATE OF u`,
    tx`UPDATE key_daily_usage u SET committed = u.committed - d.credits
       FROM unnest(${keyIds}::text[], ${days}::text[], ${rows.map((row) => row.credits)}::bigint[]) AS d(key_id, day, credits)
       WHERE u.key_id = d.key_id AND u.day = d.day`,
  ]);
}
