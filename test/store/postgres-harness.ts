import { randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { ManualClock } from '../../src/core/clock.js';
import { createPostgresStore } from '../../src/store/postgres/postgres-store.js';
import type { Store } from '../../src/store/types.js';
import { T0 } from './cases/harness.js';
import type { StoreHarness } from './store.case.js';

/**
 * The PostgreSQL server the store tests run against: the one on this machine by default. The tests fail,
 * never skip, when it is unreachable: a green run must mean the PostgreSQL store was exercised.
 */
export const POSTGRES_URL = process.env.SVC_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

let admin: postgres.Sql | undefined;

async function adminSql(): Promise<postgres.Sql> {
  if (admin) return admin;
  const sql = postgres(POSTGRES_URL, { max: 2, connect_timeout: 5, onnotice: () => undefined });
  try {
    await sql`SELECT 1`;
  } catch (error) {
    await sql.end({ timeout: 0 });
    const { hostname, port, pathname } = new URL(POSTGRES_URL);
    throw new Error(
      `PostgreSQL at ${hostname}:${port || '5432'} (database ${pathname.slice(1)}) is required by the store tests and is ` +
        `unreachable: ${error instanceof Error ? error.message : String(error)}. Start it (trust auth on 127.0.0.1:5432, ` +
        `database test) or set SVC_TEST_POSTGRES_URL.`,
    );
  }
  admin = sql;
  return sql;
}

/** A new empty schema; names are random so parallel test files and reruns never collide. */
export async function createTestSchema(): Promise<string> {
  const sql = await adminSql();
  const schema = `svc_test_${randomUUID().replaceAll('-', '').slice(0, 20)}`;
  await sql`CREATE SCHEMA ${sql(schema)}`;
  return schema;
}

export async function dropTestSchema(schema: string): Promise<void> {
  const sql = await adminSql();
  await sql`DROP SCHEMA IF EXISTS ${sql(schema)} CASCADE`;
}

/** A name for a schema that does not exist yet (migrate() creates it). */
export function freshSchemaName(): string {
  return `svc_test_${randomUUID().replaceAll('-', '').slice(0, 20)}`;
}

/** Plain SQL on a test schema, for what the Store interface does not expose (constraints, raw counters). */
export async function rawSql(schema: string): Promise<postgres.Sql> {
  await adminSql();
  return postgres(POSTGRES_URL, { max: 2, onnotice: () => undefined, connection: { search_path: schema } });
}

export async function closeAdmin(): Promise<void> {
  await admin?.end({ timeout: 5 });
  admin = undefined;
}

export function openPostgresStore(schema: string, clock: ManualClock, max = 4): Store {
  return createPostgresStore({ url: POSTGRES_URL, clock, schema, max });
}

/** A store alone in a fresh schema, dropped with everything in it at close. */
export async function openPostgresHarness(): Promise<StoreHarness> {
  const schema = await createTestSchema();
  const clock = new ManualClock(T0);
  let store: Store;
  try {
    store = openPostgresStore(schema, clock);
  } catch (error) {
    await dropTestSchema(schema);
    throw error;
  }
  return {
    store,
    clock,
    async close() {
      await store.close();
      await dropTestSchema(schema);
    },
  };
}
