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
import { createPostgresStore } from '../../store/postgres/postgres-store.js';
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
  const store = db.kind === 'postgres' ? openPostgres(db.url, clock) : openSqlite(db.path, clock);
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

/**
 * `max` and `schema` are ours: taken out so the driver does not send them to the server as settings. Only
 * the query string is parsed here: multi-host URLs (`postgres://h1,h2/db`), which the driver accepts, are
 * not valid WHATWG URLs.
 */
function openPostgres(url: string, clock: Clock): Store {
  const queryStart = url.indexOf('?');
  const params = new URLSearchParams(queryStart === -1 ? '' : url.slice(queryStart + 1));
  const max = params.get('max');
  const schema = params.get('schema');
  params.delete('max');
  params.delete('schema');
  if (max !== null && !/^[1-9][0-9]*$/.test(max)) {
    throw new ConfigError(`SVC_DATABASE_URL: max (the pool size) must be a positive integer, got '${max}'`);
  }
  const base = queryStart === -1 ? url : url.slice(0, queryStart);
  const rest = params.toString();
  try {
    return createPostgresStore({
      url: rest === '' ? base : `${base}?${rest}`,
      clock,
      ...(max === null ? {} : { max: Number(max) }),
      ...(schema === null ? {} : { schema }),
    });
  } catch (error) {
    throw new ConfigError(`SVC_DATABASE_URL: ${error instanceof Error ? error.message : String(error)}`);
  }
}
