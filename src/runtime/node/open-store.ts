/**
 * Chooses the store from SVC_DATABASE_URL: unset -> the embedded SQLite file ./data/svc-gateway.db;
 * `sqlite:<path>` or `file:<path>` -> that SQLite file; `postgres://` or `postgresql://` -> PostgreSQL,
 * with two options of ours in the query string: `max` (pool size, default 10) and `schema` (default: the
 * server's search_path). Every other query parameter (sslmode, application_name, ...) goes to the driver.
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Clock } from '../../core/clock.js';
import { ConfigError } from '../../config/schema.js';
import { createSqliteStore } from '../../store/sqlite/sqlite-store.js';
import type { Store } from '../../store/types.js';

export const DEFAULT_DATABASE_PATH = './data/svc-gateway.db';

export function describeDatabase(url: string | undefined): { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string } {
  if (!url) return { kind: 'sqlite', path: resolve(DEFAULT_DATABASE_PATH) };
  if (/^postgres(ql)?:\/\//.test(url)) return { kind: 'postgres', url };
  const path = url.replace(/^(sqlite|file):(\/\/)?/, '');
  if (path === '') throw new ConfigError('SVC_DATABASE_URL: empty SQLite path');
  return { kind: 'sqlite', path: path === ':memory:' ? path : resolve(path) };
}

export async function openStore(url: string | undefined, clock: Clock): Promise<Store> {
  const db = describeDatabase(url);
  const store = db.kind === 'postgres' ? await openPostgres(db.url, clock) : openSqlite(db.path, clock);
  try {
    await store.migrate();
  } catch (error) {
    // A pool left open would keep the process alive after the failed start.
    await store.close();
    throw error;
  }
  return store;
}

function openSqlite(path: string, clock: Clock): Store {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  return createSqliteStore({ path, clock });
}

/** Loaded on demand: the embedded default should not carry the PostgreSQL driver in memory. */
async function openPostgres(url: string, clock: Clock): Promise<Store> {
  const { postgresStoreFromUrl } = await import('../../store/postgres/store-from-url.js');
  return postgresStoreFromUrl(url, clock);
}
