// The processes a bench run starts: the upstream, the floor proxy and the gateway (through its own CLI, as
// an operator runs it), with a database of its own: a temporary SQLite file, or a fresh PostgreSQL schema
// that is dropped afterwards. Accounts, credits and the key are made with the CLI too. And the limit
// gateway (../shared/bench/limit-gateway.mjs), a reference target with a SQLite file of its own, and its
// PostgreSQL counterpart (bench/servers/limit-gateway-postgres.mjs) in a schema of its own.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { readyJson, runCommand, startProcess } from './processes.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLI = join(ROOT, 'bin/svc-gateway.js');
/** Node options that start the gateway with its ledger answering at once (bench/lib/free-ledger.mjs): a bound. */
export const FREE_LEDGER_NODE_ARGS = ['--import', pathToFileURL(join(ROOT, 'bench/lib/free-ledger.mjs')).href];
export const PG_URL = process.env.SVC_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
/** Far more than any run spends (about 1 credit per bench request): the bench must never see a 402. */
const BENCH_CREDITS = 1_000_000_000_000;

export function startUpstream(plan, mode) {
  return startProcess({
    name: `upstream (${mode})`,
    plan,
    core: plan.load ?? null,
    command: process.execPath,
    args: [join(ROOT, 'bench/servers/upstream.mjs'), '--mode', mode],
    readyPort: readyJson,
  });
}

export function startFloor(plan, upstreamPort, nodeArgs = []) {
  return startProcess({
    name: 'floor proxy',
    plan,
    core: plan.underTest ?? null,
    command: process.execPath,
    args: [...nodeArgs, join(ROOT, 'bench/servers/floor-proxy.mjs'), String(upstreamPort)],
    readyPort: readyJson,
  });
}

/**
 * The limit gateway: the least a Node metered LLM gateway does per request (auth against SQLite, a durable
 * reserve and settle, the upstream call, the `svc` metadata), hand-written and kept outside the project in
 * ../shared/bench/ (SVC_BENCH_LIMIT_GATEWAY overrides the path). It loads libsql and undici from the
 * project's node_modules (PRODUCT_DIR, and the project's root as its cwd), seeds its own SQLite file in a
 * temporary directory and prints its key in its ready line. `upstream: 'sse'` has it gather a non-streaming
 * answer from an upstream stream, as the product does with an openai-compatible provider by default
 * (`upstream_streaming: true`); streaming clients are always relayed from an upstream stream.
 * Resolves with the process, `key`, `options` (as the limit gateway reports them) and `cleanup()`.
 */
export const LIMIT_GATEWAY = process.env.SVC_BENCH_LIMIT_GATEWAY ?? join(ROOT, '../shared/bench/limit-gateway.mjs');

/** A limit gateway's ready line, `{"ready":true,"port":N,"key":"svc_live_..."}`, parsed; null for any other line. */
function limitReadyLine(line) {
  try {
    const v = JSON.parse(line);
    return v && v.ready === true && Number.isInteger(v.port) && typeof v.key === 'string' ? v : null;
  } catch {
    return null;
  }
}

export async function startLimitGateway(plan, upstreamPort, { model, upstream = 'sse', nodeArgs = [] }) {
  if (!existsSync(LIMIT_GATEWAY)) {
    throw new Error(`limit gateway not found at ${LIMIT_GATEWAY}: set SVC_BENCH_LIMIT_GATEWAY or run with --no-limit`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-limit-'));
  let ready = null;
  let proc;
  try {
    proc = await startProcess({
      name: 'limit gateway',
      plan,
      core: plan.underTest ?? null,
      command: process.execPath,
      args: [
        ...nodeArgs,
        LIMIT_GATEWAY,
        '--upstream-port', String(upstreamPort),
        '--port', '0',
        '--db', join(dir, 'limit.db'),
        '--upstream', upstream,
        '--upstream-model', model,
      ],
      env: { PRODUCT_DIR: ROOT },
      cwd: ROOT,
      readyPort: (line) => {
        ready ??= limitReadyLine(line);
        return ready?.port ?? null;
      },
    });
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  proc.key = ready.key;
  proc.options = ready.options ?? null;
  proc.cleanup = async () => rmSync(dir, { recursive: true, force: true });
  return proc;
}

/**
 * The limit gateway on PostgreSQL (bench/servers/limit-gateway-postgres.mjs, ours): the same work with its
 * ledger on the database the product's PostgreSQL store uses, in a fresh schema dropped by cleanup(). The
 * product on PostgreSQL is measured against it (issue 20: "at least 0.5 of the limit gateway on the same
 * database"). Like prepareDatabase's, pinBackends(core) moves its server backends to the load core.
 */
export async function startLimitGatewayPostgres(plan, upstreamPort, { model }) {
  const schema = `svc_bench_limit_${process.pid}_${Date.now()}`;
  const { default: postgres } = await import('postgres');
  const admin = postgres(PG_URL, { max: 1, onnotice: () => {} });
  const dropSchema = async () => {
    await admin.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  };
  let ready = null;
  let proc;
  try {
    proc = await startProcess({
      name: 'limit gateway (postgres)',
      plan,
      core: plan.underTest ?? null,
      command: process.execPath,
      args: [
        join(ROOT, 'bench/servers/limit-gateway-postgres.mjs'),
        '--upstream-port', String(upstreamPort),
        '--port', '0',
        '--url', PG_URL,
        '--schema', schema,
        '--upstream-model', model,
      ],
      cwd: ROOT,
      readyPort: (line) => {
        ready ??= limitReadyLine(line);
        return ready?.port ?? null;
      },
    });
  } catch (e) {
    await dropSchema();
    throw e;
  }
  proc.key = ready.key;
  proc.options = ready.options ?? null;
  proc.pinBackends = (core) => pinBackendsOf(admin, schema, core);
  proc.cleanup = dropSchema;
  return proc;
}

/** Moves the server backends whose connections are named `applicationName` to `core`; returns how many. */
async function pinBackendsOf(admin, applicationName, core) {
  const rows = await admin`SELECT pid FROM pg_stat_activity WHERE application_name = ${applicationName}`;
  for (const { pid } of rows) runCommand('taskset', ['-pc', core, String(pid)]);
  return rows.length;
}

/** Every alias served by the bench upstream, under the model name the floor's clients send (same answer). */
function gatewayConfig(upstreamPort, model) {
  const target = { targets: [{ provider: 'bench', model }] };
  return {
    providers: { bench: { type: 'openai-compatible', base_url: `http://127.0.0.1:${upstreamPort}/v1` } },
    aliases: { 'svc-fast': target, 'svc-code': target, 'svc-smart': target },
  };
}

/**
 * A database for one gateway target, seeded through the CLI with `accounts` accounts, each with credits and
 * one live key (one account by default: every request then queues on the same key, day and grant rows, the
 * worst case for row locks; several accounts model several clients). Returns the environment the gateway
 * runs with, the keys, and cleanup().
 */
export async function prepareDatabase(kind, { upstreamPort, model, accounts = 1, cliPath = CLI }) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-'));
  const configPath = join(dir, 'gateway.json');
  writeFileSync(configPath, JSON.stringify(gatewayConfig(upstreamPort, model), null, 2));
  let url;
  let dropSchema = async () => {};
  let pinBackends = async () => 0;
  if (kind === 'sqlite') {
    url = `sqlite:${join(dir, 'gateway.db')}`;
  } else {
    const schema = `svc_bench_${process.pid}_${Date.now()}`;
    const { default: postgres } = await import('postgres');
    const admin = postgres(PG_URL, { max: 1, onnotice: () => {} });
    try {
      await admin.unsafe(`CREATE SCHEMA ${schema}`);
    } catch (e) {
      await admin.end();
      throw new Error(`PostgreSQL at ${PG_URL} is not usable (${e.message}); set SVC_BENCH_PG_URL or run with --stores sqlite`);
    }
    // The application name lets the bench find the gateway's own server backends (pinBackends below).
    url = `${PG_URL}?schema=${schema}&application_name=${schema}`;
    pinBackends = (core) => pinBackendsOf(admin, schema, core);
    dropSchema = async () => {
      await admin.unsafe(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    };
  }
  const env = { SVC_DATABASE_URL: url, SVC_CONFIG: configPath, HOST: '127.0.0.1' };
  const cli = (...args) => JSON.parse(runCommand(process.execPath, [cliPath, ...args, '--json'], env));
  const accountIds = [];
  const secrets = [];
  for (let i = 0; i < accounts; i++) {
    const account = cli('accounts', 'create', '--name', `bench ${i}`);
    cli('credits', 'grant', '--account', account.id, '--purchased', String(BENCH_CREDITS));
    accountIds.push(account.id);
    secrets.push(cli('keys', 'create', '--account', account.id, '--name', 'bench').secret);
  }
  return {
    kind,
    url,
    env,
    accountIds,
    /** One key per account; the load generator uses them in turn. */
    secrets,
    /**
     * PostgreSQL only: moves the server backends serving the gateway's connections to `core` (the load
     * generator's), so the database, like the upstream, does not compete with the gateway for its core.
     * Connections open lazily: call it once they exist (after a warm-up). Returns how many were moved.
     */
    pinBackends,
    /** `ledger verify` through the CLI: recomputes every balance from the journal. */
    verifyLedger: () => cli('ledger', 'verify'),
    async cleanup() {
      await dropSchema();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * `svc-gateway serve` on a free port, pinned to the core under test; nodeArgs go before the script; `cli`:
 * another build's bin/svc-gateway.js (bench/interleaved.mjs --other).
 */
export function startGatewayProcess(plan, db, nodeArgs = [], cli = CLI) {
  return startProcess({
    name: `gateway (${db.kind})`,
    plan,
    core: plan.underTest ?? null,
    command: process.execPath,
    args: [...nodeArgs, cli, 'serve', '--port', '0'],
    env: db.env,
    readyPort: (line) => {
      const m = /listening on http:\/\/[^:]+:(\d+)\//.exec(line);
      return m ? Number(m[1]) : null;
    },
  });
}

/**
 * What the ledger recorded for the bench account: usage requests (the daily rollup, written in the same
 * transaction as each settlement), pending holds and the balance, read through the store API.
 */
export async function ledgerSummary(db) {
  const { openStore } = await import('../../dist/runtime/node/open-store.js');
  const { systemClock } = await import('../../dist/core/clock.js');
  const store = await openStore(db.url, systemClock);
  try {
    const day = (ms) => new Date(ms).toISOString().slice(0, 10);
    const summary = { usageRequests: 0, creditsCharged: 0, pendingHolds: 0 };
    for (const accountId of db.accountIds) {
      const rows = await store.usage.rollup({
        accountId,
        environment: 'live',
        startDay: day(Date.now() - 2 * 86_400_000),
        endDay: day(Date.now() + 86_400_000),
        model: null,
      });
      summary.usageRequests += rows.reduce((n, r) => n + r.requests, 0);
      summary.creditsCharged += rows.reduce((n, r) => n + r.credits, 0);
      summary.pendingHolds += await store.ledger.countPendingHolds(accountId);
    }
    return summary;
  } finally {
    await store.close();
  }
}
