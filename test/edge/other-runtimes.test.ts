/**
 * The core app on Deno and Bun (issue 19): src/runtime/deno/server.ts and src/runtime/bun/server.ts, each
 * started as a child process by the runtime's binary from the project's node_modules (the npm packages `deno`
 * and `bun`, devDependencies), on the real PostgreSQL in a schema of its own. Smoke only: the models list,
 * one chat completion charged once, one stream to [DONE]. The deep behaviour is the Node and workerd suites'.
 * A missing runtime fails the run, it is never skipped.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { createPostgresStore } from '../../src/store/postgres/postgres-store.js';
import type { Store } from '../../src/store/types.js';
import { readInPieces, seedAccount } from '../helpers/gateway.js';
import { closeAdmin, createTestSchema, dropTestSchema, POSTGRES_URL } from '../store/postgres-harness.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const BIN = join(ROOT, 'node_modules/.bin');

interface Runtime {
  name: string;
  binary: string;
  args: string[];
}

const RUNTIMES: Runtime[] = [
  {
    name: 'Deno',
    binary: join(BIN, 'deno'),
    // .js imports of .ts files (NodeNext style) need sloppy imports; npm packages come from node_modules as is.
    args: ['run', '--sloppy-imports', '--node-modules-dir=manual', '--no-lock', '--allow-net', '--allow-env', 'src/runtime/deno/server.ts'],
  },
  {
    name: 'Bun',
    binary: join(BIN, 'bun'),
    args: ['--no-install', '--no-env-file', 'run', 'src/runtime/bun/server.ts'],
  },
];

const STARTUP_MS = 20_000;

interface Running {
  url: string;
  store: Store;
  schema: string;
  child: ChildProcess;
  output: () => string;
}

async function start(rt: Runtime): Promise<Running> {
  if (!existsSync(rt.binary)) {
    throw new Error(`${rt.name} is required by this test and ${rt.binary} is missing: run npm install (devDependency '${rt.name.toLowerCase()}')`);
  }
  const schema = await createTestSchema();
  const store = createPostgresStore({ url: POSTGRES_URL, clock: systemClock, schema });
  await store.migrate();
  const child = spawn(rt.binary, rt.args, {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    // A clean environment: nothing of the host's SVC_* leaks in. No update checks, no telemetry (no network).
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/root',
      SVC_DATABASE_URL: `${POSTGRES_URL}?schema=${schema}`,
      SVC_LOG_LEVEL: process.env.SVC_TEST_RUNTIME_LOG ?? 'off',
      PORT: '0',
      HOST: '127.0.0.1',
      DENO_NO_UPDATE_CHECK: '1',
      DENO_NO_PROMPT: '1',
      DO_NOT_TRACK: '1',
    },
  });
  let out = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
  const output = (): string => out;
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${rt.name}: not listening after ${STARTUP_MS} ms:\n${out}`)), STARTUP_MS);
      const onData = (): void => {
        const m = /listening on (http:\/\/\S+\/v1)/.exec(out);
        if (m?.[1] === undefined) return;
        clearTimeout(timer);
        resolve(m[1]);
      };
      child.stdout?.on('data', onData);
      child.once('error', (e) => {
        clearTimeout(timer);
        reject(new Error(`${rt.name}: cannot start ${rt.binary}: ${e.message}`));
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`${rt.name} exited (${code ?? signal}) before listening:\n${out}`));
      });
    });
    return { url, store, schema, child, output };
  } catch (e) {
    await stop(child);
    await store.close();
    await dropTestSchema(schema);
    throw e;
  }
}

/** SIGTERM (Deno drains and exits), then SIGKILL if it is still there after 3 s. */
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
  await exited;
  clearTimeout(timer);
}

interface Svc {
  credits_used: number;
  balance_remaining: number | null;
  routed_model: string;
}

afterAll(async () => {
  await closeAdmin();
});

for (const rt of RUNTIMES) {
  describe(`the gateway on ${rt.name}`, () => {
    let gw: Running;

    const post = (path: string, secret: string, body: unknown): Promise<Response> =>
      fetch(`${gw.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

    /** The account's books after a completion: nothing held, the purchased balance down by exactly `used`. */
    async function expectChargedOnce(accountId: string, grant: number, used: number): Promise<void> {
      expect(await gw.store.ledger.countPendingHolds(accountId)).toBe(0);
      const balance = await gw.store.ledger.balance(accountId, 'live');
      expect(balance).toMatchObject({ purchased: grant - used, reserved: 0 });
      const today = new Date().toISOString().slice(0, 10);
      // From yesterday: a run across midnight UTC records its first requests on the day before.
      const since = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
      const rows = await gw.store.usage.rollup({ accountId, environment: 'live', startDay: since, endDay: today, model: null });
      expect(rows.reduce((s, r) => s + r.requests, 0)).toBe(1);
      expect(rows.reduce((s, r) => s + r.credits, 0)).toBe(used);
    }

    beforeAll(async () => {
      gw = await start(rt);
    }, STARTUP_MS + 10_000);
    afterAll(async () => {
      if (gw === undefined) return;
      await stop(gw.child);
      await gw.store.close();
      await dropTestSchema(gw.schema);
    });

    it('lists the four aliases', async () => {
      const a = await seedAccount(gw.store, { purchased: 1000 });
      const r = await fetch(`${gw.url}/models`, { headers: { authorization: `Bearer ${a.secret}` } });
      expect(r.status).toBe(200);
      const body = (await r.json()) as { data: { id: string }[] };
      expect(body.data.map((m) => m.id)).toEqual(['svc-auto', 'svc-fast', 'svc-code', 'svc-smart']);
    });

    it('answers a chat completion with its svc metadata, and charges it once', async () => {
      const GRANT = 100_000;
      const a = await seedAccount(gw.store, { purchased: GRANT });
      const r = await post('/chat/completions', a.secret, { model: 'svc-fast', messages: [{ role: 'user', content: `Hello from ${rt.name}` }], max_tokens: 12 });
      expect(r.status).toBe(200);
      const body = (await r.json()) as { object: string; choices: { message: { content: string } }[]; svc: Svc };
      expect(body.object).toBe('chat.completion');
      expect(body.choices[0]?.message.content.length).toBeGreaterThan(0);
      expect(body.svc.credits_used).toBeGreaterThan(0);
      expect(body.svc.routed_model).toEqual(expect.any(String));
      expect(body.svc.balance_remaining).toBe(GRANT - body.svc.credits_used);
      await expectChargedOnce(a.accountId, GRANT, body.svc.credits_used);
    });

    it('streams: chunks as they come, the finish with svc, data: [DONE]; charged once', async () => {
      const GRANT = 100_000;
      const a = await seedAccount(gw.store, { purchased: GRANT });
      const r = await post('/chat/completions', a.secret, { model: 'svc-fast', messages: [{ role: 'user', content: 'Stream it' }], max_tokens: 12, stream: true });
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const { text, reads } = await readInPieces(r);
      // The sandbox paces its tokens: an answer buffered to the end would arrive in one piece.
      expect(reads).toBeGreaterThan(2);
      expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
      type Chunk = { object: string; choices: { delta: { content?: string }; finish_reason: string | null }[]; svc?: Svc };
      const events = text
        .split('\n\n')
        .filter((b) => b.startsWith('data: {'))
        .map((b) => JSON.parse(b.slice(6)) as Chunk);
      expect(events.every((e) => e.object === 'chat.completion.chunk')).toBe(true);
      expect(events.map((e) => e.choices[0]?.delta.content ?? '').join('').length).toBeGreaterThan(0);
      expect(events.some((e) => e.choices[0]?.finish_reason != null)).toBe(true);
      const svc = events.find((e) => e.svc !== undefined)?.svc;
      expect(svc?.credits_used).toBeGreaterThan(0);
      await expectChargedOnce(a.accountId, GRANT, svc?.credits_used ?? -1);
    });
  });
}
