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

export async function startWorkerdGateway(bundle: string, opts: { config?: object; bindings?: Record<string, string> } = {}): Promise<WorkerdGateway> {
  const schema = await createTestSchema();
  const store = createPostgresStore({ url: POSTGRES_URL, clock: systemClock, schema });
  await store.migrate();
  const mf = new Miniflare({
    modules: true,
    modulesRoot: bundle,
    scriptPath: join(bundle, 'worker.js'),
    compatibilityDate: '2026-04-01',
    compatibilityFlags: ['nodejs_compat'],
    bindings: {
      SVC_CONFIG: opts.config === undefined ? '' : JSON.stringify(opts.config),
      SVC_DATABASE_URL: `${POSTGRES_URL}?schema=${schema}`,
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
    },
  };
}

export async function removeWorkerBundle(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}
