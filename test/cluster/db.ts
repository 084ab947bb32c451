/** Test-side access to the cluster's database: seeding through the Store, and a few raw reads. */
import Database from 'libsql';
import { systemClock } from '../../src/core/clock.js';
import { describeDatabase, openStore } from '../../src/runtime/node/open-store.js';
import type { Store } from '../../src/store/types.js';

export function openClusterStore(databaseUrl: string): Promise<Store> {
  return openStore(databaseUrl, systemClock);
}

export interface DailyCounter {
  key_id: string;
  day: string;
  committed: number;
}

/** The per-key daily counters, read directly: the Store has no operator read for them. */
export async function dailyCounters(databaseUrl: string): Promise<DailyCounter[]> {
  const db = describeDatabase(databaseUrl);
  const sql = 'SELECT key_id, day, committed FROM key_daily_usage';
  if (db.kind === 'sqlite') {
    const conn = new Database(db.path);
    try {
      return (conn.prepare(sql).all() as DailyCounter[]).map((r) => ({ ...r, committed: Number(r.committed) }));
    } finally {
      conn.close();
    }
  }
  const { default: postgres } = await import('postgres');
  const pg = postgres(db.url, { max: 1, onnotice: () => undefined });
  try {
    const rows = await pg.unsafe<DailyCounter[]>(sql);
    return rows.map((r) => ({ ...r, committed: Number(r.committed) }));
  } finally {
    await pg.end();
  }
}
