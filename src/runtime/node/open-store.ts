/**
 * Chooses the store from SVC_DATABASE_URL: unset -> the embedded SQLite file ./data/svc-gateway.db;
 * `sqlite:<path>` or `file:<path>` -> that SQLite file; `postgres://` -> PostgreSQL (next issue).
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
  if (db.kind === 'postgres') {
    throw new ConfigError('SVC_DATABASE_URL: the PostgreSQL store is not available in this version yet; unset it to use SQLite.');
  }
  if (db.path !== ':memory:') mkdirSync(dirname(db.path), { recursive: true });
  const store = createSqliteStore({ path: db.path, clock });
  await store.migrate();
  return store;
}
