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

/** Plain SQL on the cluster's database (a SQLite file or a PostgreSQL schema), one connection per call. */
export async function rawQuery<Row>(databaseUrl: string, sql: string): Promise<Row[]> {
  const db = describeDatabase(databaseUrl);
  if (db.kind === 'sqlite') {
    const conn = new Database(db.path);
    try {
      return conn.prepare(sql).all() as Row[];
    } finally {
      conn.close();
    }
  }
  const { default: postgres } = await import('postgres');
  // `schema` is the gateway's own URL option (src/runtime/node/open-store.ts), not a server setting.
  const url = new URL(db.url);
  const schema = url.searchParams.get('schema');
  url.searchParams.delete('schema');
  const pg = postgres(url.toString(), {
    max: 1,
    onnotice: () => undefined,
    ...(schema ? { connection: { search_path: schema } } : {}),
  });
  try {
    return (await pg.unsafe(sql)) as unknown as Row[];
  } finally {
    await pg.end();
  }
}

/** The per-key daily counters, read directly: the Store has no operator read for them. */
export async function dailyCounters(databaseUrl: string): Promise<DailyCounter[]> {
  const rows = await rawQuery<DailyCounter>(databaseUrl, 'SELECT key_id, day, committed FROM key_daily_usage');
  return rows.map((r) => ({ ...r, committed: Number(r.committed) }));
}

/** How many holds ended each way. */
export async function holdOutcomes(databaseUrl: string): Promise<Record<string, number>> {
  const rows = await rawQuery<{ status: string; n: number }>(databaseUrl, 'SELECT status, COUNT(*) AS n FROM holds GROUP BY status');
  return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
}
