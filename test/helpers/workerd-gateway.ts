/**
 * The gateway as a Cloudflare Worker, run in workerd (miniflare) on this machine: the Worker bundle built by
 * wrangler from wrangler.jsonc (src/runtime/workers/worker.ts), its database the real PostgreSQL in a schema
 * of its own. Tests drive it over HTTP like the Node server, and seed and inspect the books through a
 * PostgreSQL store of their own on the same schema.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Miniflare } from 'miniflare';
import postgres from 'postgres';
import { systemClock } from '../../src/core/clock.js';
import { createPostgresStore } from '../../src/store/postgres/postgres-store.js';
import type { Store } from '../../src/store/types.js';
import { seedAccount, type Seeded, type SeedOptions } from './gateway.js';
import { createTestSchema, dropTestSchema, POSTGRES_URL } from '../store/postgres-harness.js';

const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url).pathname;

/** Builds the Worker bundle as `wrangler deploy` would, without deploying; returns its directory. */
export async function buildWorkerBundle(): Promise<string> {
  const out = await mkdtemp(join(tmpdir(), 'svc-worker-'));
  await run(join(ROOT, 'node_modules/.bin/wrangler'), ['deploy', '--dry-run', '--outdir', out], {
    cwd: ROOT,
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: '1' },
  });
  return out;
}

export interface WorkerdGateway {
  /** Base URL of the OpenAI-compatible API, ending in /v1. */
  url: string;
  store: Store;
  /** Runs the Worker's Cron Trigger once, as the runtime would. */
  scheduled(): Promise<void>;
  seed(opts?: SeedOptions): Promise<Seeded>;
  close(): Promise<void>;
}

/**
 * How many connections the Worker may hold at once. Deployed, Hyperdrive pools them in front of the
 * database; here a role with a connection limit plays that part, so a burst of 500 requests waits for
 * slots (PostgreSQL refuses the rest with 53300 and the store waits, src/store/postgres/errors.ts) without
 * taking the server's max_connections from the test files running beside it.
 */
export const WORKER_CONNECTION_LIMIT = 40;

/** A login role of its own for the Worker, limited in connections, with the rights the gateway uses on `schema`. */
async function workerRole(schema: string): Promise<{ url: string; drop(): Promise<void> }> {
  const sql = postgres(POSTGRES_URL, { max: 1, onnotice: () => undefined });
  const role = `${schema}_worker`;
  await sql.unsafe(`CREATE ROLE ${role} LOGIN CONNECTION LIMIT ${WORKER_CONNECTION_LIMIT}`);
  for (const grant of [
    `GRANT USAGE ON SCHEMA ${schema} TO ${role}`,
    `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${schema} TO ${role}`,
    `GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA ${schema} TO ${role}`,
    `GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA ${schema} TO ${role}`,
  ]) {
    await sql.unsafe(grant);
  }
  await sql.end();
  const url = new URL(POSTGRES_URL);
  url.username = role;
  return {
    url: url.toString(),
    async drop() {
      const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => undefined });
      await admin.unsafe(`DROP OWNED BY ${role}`);
      await admin.unsafe(`DROP ROLE IF EXISTS ${role}`);
      await admin.end();
    },
  };
}

export async function startWorkerdGateway(bundle: string, opts: { config?: object; bindings?: Record<string, string> } = {}): Promise<WorkerdGateway> {
  const schema = await createTestSchema();
  const store = createPostgresStore({ url: POSTGRES_URL, clock: systemClock, schema });
  await store.migrate();
  const role = await workerRole(schema);
  const mf = new Miniflare({
    modules: true,
    modulesRoot: bundle,
    scriptPath: join(bundle, 'worker.js'),
    compatibilityDate: '2026-04-01',
    compatibilityFlags: ['nodejs_compat'],
    bindings: {
      SVC_CONFIG: opts.config === undefined ? '' : JSON.stringify(opts.config),
      // The isolate's connection slots (the URL's max) match what the role may hold, as an operator sets them.
      SVC_DATABASE_URL: `${role.url}?schema=${schema}&max=${WORKER_CONNECTION_LIMIT}`,
      SVC_LOG_LEVEL: process.env.SVC_TEST_WORKER_LOG ?? 'off',
      ...opts.bindings,
    },
    port: 0,
  });
  const ready = await mf.ready;
  return {
    url: new URL('/v1', ready).href,
    store,
    seed: (o) => seedAccount(store, o),
    async scheduled() {
      // miniflare's Fetcher type leaves out `scheduled`, which its worker has.
      const worker = (await mf.getWorker()) as unknown as { scheduled(options: { cron: string }): Promise<unknown> };
      await worker.scheduled({ cron: '* * * * *' });
    },
    async close() {
      await mf.dispose();
      await store.close();
      await dropTestSchema(schema);
      await role.drop();
    },
  };
}

export async function removeWorkerBundle(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}
