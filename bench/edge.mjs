#!/usr/bin/env node
// The gateway as a Cloudflare Worker in workerd (miniflare, as test/helpers/workerd-gateway.ts starts it),
// next to the Node gateway (`svc-gateway serve`) on the same PostgreSQL, the same sandbox config without
// pacing (the upstream costs nothing) and the same load, in one run (docs/edge.md):
//
//   npm run bench:edge                 (= npm run build && node bench/edge.mjs)
//   node bench/edge.mjs [--seconds 8] [--warmup 2] [--connections 1,8,32] [--cpu-connections 8]
//                       [--cold-samples 20] [--count-requests 100] [--max-tokens 16] [--prompt-bytes 1024]
//                       [--out FILE]
//
// 1. Bundle: worker.js from a fresh `wrangler deploy --dry-run`, raw and gzip (zlib, default level) bytes.
// 2. Cold start: `new Miniflare(...)` to `await mf.ready` (for Node: spawn to its "listening" line), then
//    the first GET /v1/models and the first chat completion against the median of the next `cold-samples`
//    of each. Both runtimes start unpinned; they are pinned to the core under test afterwards.
// 3. Load, one account and one key (every request queues on the same ledger rows): non-streaming at each
//    --connections, streaming at --cpu-connections, each point `warmup` then `seconds` of autocannon/wrk
//    (bench/lib/load.mjs) on the load core. CPU per request: utime+stime (/proc/<pid>/stat) of the process
//    under test over the measured seconds, divided by the requests answered in them; for workerd, of the
//    workerd process(es) miniflare spawned (children of this process). Also: this process's CPU (the
//    miniflare host, which workerd may call back into) and the whole machine's (/proc/stat: load
//    generator and PostgreSQL backends included).
// 4. PostgreSQL per request: a second instance of each target talks to PostgreSQL through a counting TCP
//    proxy in this process (only for this pass: the proxy would slow the load points) and serves
//    `count-requests` sequential requests of each mode; the proxy counts connections opened, statements
//    (Sync and simple Query messages), Parse messages and round trips (client flights: the client sending
//    again after the server answered; a Terminate alone is not one; a new connection's TCP handshake is not
//    counted, its startup is).
// 5. Ratios workerd / Node for req/s and CPU per request, point by point.
//
// PostgreSQL is not pinned: the Worker opens a connection (a new server backend) per request, as it would
// through Hyperdrive but here with no pool in front of the database, so its backends cannot be pinned; the
// Node gateway's are left unpinned too for the same treatment. Each target gets a fresh schema, seeded
// through the PostgreSQL store (account, purchased credits, one key) and dropped at the end.
// Prints a table and writes bench/results/edge-<time>.json. Any answer with status >= 400 fails the run.
import { execFile, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { cpus, hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { setTimeout as sleep } from 'node:timers/promises';
import { Miniflare } from 'miniflare';
import postgres from 'postgres';
import { systemClock } from '../dist/core/clock.js';
import { newId } from '../dist/core/ids.js';
import { DEFAULT_CONFIG, parseConfig } from '../dist/config/schema.js';
import { createApiKey } from '../dist/keys/key-service.js';
import { simulateCompletion } from '../dist/providers/sandbox/simulator.js';
import { createPostgresStore } from '../dist/store/postgres/postgres-store.js';
import { loadGenerator, runLoad } from './lib/load.mjs';
import { corePlan, cpuSeconds, runCommand, startProcess } from './lib/processes.mjs';
import { PG_URL } from './lib/targets.mjs';
import { promptText, requestBody } from './lib/workload.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLI = join(ROOT, 'bin/svc-gateway.js');
const MODEL = 'svc-fast';
const list = (s) => s.split(',').map((x) => x.trim()).filter(Boolean);

const { values: opts } = parseArgs({
  options: {
    seconds: { type: 'string', default: '8' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '1,8,32' },
    'cpu-connections': { type: 'string', default: '8' },
    'cold-samples': { type: 'string', default: '20' },
    'count-requests': { type: 'string', default: '100' },
    'max-tokens': { type: 'string', default: '16' },
    'prompt-bytes': { type: 'string', default: '1024' },
    out: { type: 'string' },
  },
});
const SECONDS = Number(opts.seconds);
const WARMUP = Number(opts.warmup);
const CONNECTIONS = list(opts.connections).map(Number);
const CPU_CONNECTIONS = Number(opts['cpu-connections']);
const COLD_SAMPLES = Number(opts['cold-samples']);
const COUNT_REQUESTS = Number(opts['count-requests']);
const MAX_TOKENS = Number(opts['max-tokens']);
const PROMPT_BYTES = Number(opts['prompt-bytes']);
/** Far more than any run spends: the bench must never see a 402. */
const BENCH_CREDITS = 1_000_000_000_000;
const COMPATIBILITY_DATE = '2026-04-01';
/** Wait after the load before a target is stopped, and before its ledger is read. */
const DRAIN_MS = 1000;

/** The load points: non-streaming at every connection count (req/s), streaming at the CPU point. */
const POINTS = [
  ...CONNECTIONS.map((connections) => ({ mode: 'nonstream', connections })),
  { mode: 'stream', connections: CPU_CONNECTIONS },
];
if (!CONNECTIONS.includes(CPU_CONNECTIONS)) POINTS.splice(CONNECTIONS.length, 0, { mode: 'nonstream', connections: CPU_CONNECTIONS });
const pointKey = (p) => `${p.mode}@${p.connections}`;

const plan = corePlan();
const generator = loadGenerator();
for (const note of [plan.note, generator.note]) if (note) console.log(`NOTE: ${note}`);

class BenchFailure extends Error {}

const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim()) || 100;

function fmt(n, digits) {
  return Number.isFinite(n) ? n.toFixed(digits) : '-';
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

// ---------------------------------------------------------------------------------------------------------
// /proc: the workerd processes miniflare spawned, and the machine's CPU time.

/** pid -> { ppid, comm } for every process (Linux /proc). */
function processTable() {
  const table = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      table.set(Number(entry), { ppid: Number(fields[1]), comm });
    } catch {
      // gone between readdir and read
    }
  }
  return table;
}

/** Descendants of `root` (not root itself), by ppid chains. */
function descendants(root, table = processTable()) {
  const children = new Map();
  for (const [pid, { ppid }] of table) {
    if (!children.has(ppid)) children.set(ppid, []);
    children.get(ppid).push(pid);
  }
  const out = [];
  const queue = [root];
  while (queue.length > 0) {
    for (const c of children.get(queue.shift()) ?? []) {
      out.push(c);
      queue.push(c);
    }
  }
  return out;
}

/** The workerd processes under this one (miniflare spawns the workerd binary directly). */
function workerdPids() {
  const table = processTable();
  return descendants(process.pid, table).filter((pid) => table.get(pid)?.comm.startsWith('workerd'));
}

/** Busy CPU seconds of the whole machine since boot (all cores): /proc/stat without idle and iowait. */
function machineCpuSeconds() {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, , , irq, softirq, steal] = f;
  return (user + nice + system + irq + softirq + (steal || 0)) / CLK_TCK;
}

function benchCpuSeconds() {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

/** Pins every thread of the process to the core under test, as startProcess pins the Node gateway. */
function pinToCoreUnderTest(pid) {
  if (plan.pinned) runCommand('taskset', ['-a', '-pc', plan.underTest, String(pid)]);
}

// ---------------------------------------------------------------------------------------------------------
// PostgreSQL: a fresh schema per target, seeded through the store, and a counting proxy.

const admin = postgres(PG_URL, { max: 1, onnotice: () => undefined });

async function prepareSchema(tag) {
  const schema = `svc_bench_edge_${process.pid}_${Date.now()}_${tag}`;
  try {
    await admin.unsafe(`CREATE SCHEMA ${schema}`);
  } catch (e) {
    throw new Error(`PostgreSQL at ${PG_URL} is not usable (${e.message}); set SVC_BENCH_PG_URL`);
  }
  const store = createPostgresStore({ url: PG_URL, clock: systemClock, schema, max: 2 });
  await store.migrate();
  // As test/helpers/gateway.ts seedAccount does: an account, purchased credits, one live key.
  const account = await store.keys.createAccount({ id: newId('acct_'), name: 'bench edge' });
  await store.ledger.grant({ accountId: account.id, environment: 'live', kind: 'purchased', amount: BENCH_CREDITS, expiresAt: null, idempotencyKey: null });
  const { secret } = await createApiKey(store.keys, { accountId: account.id, environment: 'live', name: 'bench', dailyCreditLimit: null });
  return {
    schema,
    accountId: account.id,
    secret,
    store,
    /** What the ledger recorded: usage requests (daily rollup, written with each settlement) and pending holds. */
    async ledger() {
      const day = (ms) => new Date(ms).toISOString().slice(0, 10);
      const rows = await store.usage.rollup({
        accountId: account.id,
        environment: 'live',
        startDay: day(Date.now() - 2 * 86_400_000),
        endDay: day(Date.now() + 86_400_000),
        model: null,
      });
      return {
        usageRequests: rows.reduce((n, r) => n + r.requests, 0),
        creditsCharged: rows.reduce((n, r) => n + r.credits, 0),
        pendingHolds: await store.ledger.countPendingHolds(account.id),
      };
    },
    async drop() {
      await store.close();
      await admin.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    },
  };
}

/** The database URL of a schema, through `hostPort` (the proxy) when given; the store reads `?schema=`. */
function databaseUrl(schema, hostPort = null) {
  const u = new URL(PG_URL);
  if (hostPort !== null) u.host = hostPort;
  u.searchParams.set('schema', schema);
  return u.href;
}

/**
 * A TCP proxy in front of PostgreSQL that reads the frontend's messages (startup, then type byte + length)
 * and counts connections, statements, Parse messages and round trips. TLS is not expected (local, no
 * sslmode); if a client negotiated it, its connection is marked opaque and only its connection counts.
 */
async function startCountingProxy() {
  const target = new URL(PG_URL);
  const counts = { connections: 0, flights: 0, syncs: 0, queries: 0, parses: 0, terminates: 0, messages: 0, opaque: 0 };
  const sockets = new Set();
  const server = createServer((client) => {
    counts.connections++;
    const upstream = connect(Number(target.port || 5432), target.hostname);
    sockets.add(client);
    sockets.add(upstream);
    const conn = { lastFromServer: true, startup: true, opaque: false, buf: Buffer.alloc(0) };
    const onMessage = (type) => {
      counts.messages++;
      if (type === 'X') {
        counts.terminates++;
        return;
      }
      if (type === 'S') counts.syncs++;
      else if (type === 'Q') counts.queries++;
      else if (type === 'P') counts.parses++;
      if (conn.lastFromServer) {
        counts.flights++;
        conn.lastFromServer = false;
      }
    };
    client.on('data', (chunk) => {
      upstream.write(chunk);
      if (conn.opaque) return;
      conn.buf = conn.buf.length === 0 ? chunk : Buffer.concat([conn.buf, chunk]);
      for (;;) {
        if (conn.startup) {
          if (conn.buf.length < 8) break;
          const len = conn.buf.readInt32BE(0);
          if (conn.buf.length < len) break;
          const code = conn.buf.readInt32BE(4);
          conn.buf = conn.buf.subarray(len);
          onMessage('startup');
          // SSLRequest / GSSENCRequest: another untyped message follows (or TLS, which we do not read).
          if (code !== 80877103 && code !== 80877104) conn.startup = false;
          continue;
        }
        if (conn.buf.length < 5) break;
        const len = conn.buf.readInt32BE(1);
        if (conn.buf.length < 1 + len) break;
        const type = String.fromCharCode(conn.buf[0]);
        conn.buf = conn.buf.subarray(1 + len);
        onMessage(type);
      }
    });
    upstream.on('data', (chunk) => {
      // The answer to an SSLRequest is one byte; 'S' means TLS follows, which is opaque to us.
      if (conn.startup && chunk.length === 1 && chunk[0] === 0x53) {
        conn.opaque = true;
        counts.opaque++;
      }
      conn.lastFromServer = true;
      client.write(chunk);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end);
    upstream.on('close', end);
    client.on('error', end);
    upstream.on('error', end);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    hostPort: `127.0.0.1:${server.address().port}`,
    snapshot: () => ({ ...counts }),
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// The two targets: start (timed), base URL, the CPU time of the process(es) under test, stop.

function sandboxConfig() {
  const cfg = structuredClone(DEFAULT_CONFIG);
  cfg.providers.sandbox.pace = { time_to_first_token_ms: 0, tokens_per_second: 0 };
  parseConfig(cfg); // refuses a config the gateway would refuse
  return cfg;
}

async function buildWorkerBundle() {
  const out = mkdtempSync(join(tmpdir(), 'svc-bench-edge-'));
  const t0 = performance.now();
  const { stdout } = await promisify(execFile)(join(ROOT, 'node_modules/.bin/wrangler'), ['deploy', '--dry-run', '--outdir', out], {
    cwd: ROOT,
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: '1' },
  });
  const buildMs = performance.now() - t0;
  const code = readFileSync(join(out, 'worker.js'));
  // wrangler's own figure, for reference: "Total Upload: 1555.52 KiB / gzip: 335.67 KiB"
  const m = /Total Upload:\s*([\d.]+)\s*KiB\s*\/\s*gzip:\s*([\d.]+)\s*KiB/.exec(stdout);
  return {
    dir: out,
    bundle: {
      workerJsBytes: code.length,
      workerJsGzipBytes: gzipSync(code).length,
      gzipLevel: 'zlib default (6)',
      wranglerReported: m ? { totalUploadKiB: Number(m[1]), gzipKiB: Number(m[2]) } : null,
      buildMs,
    },
  };
}

async function startWorkerd(bundleDir, config, dbUrl) {
  const t0 = performance.now();
  const mf = new Miniflare({
    modules: true,
    modulesRoot: bundleDir,
    scriptPath: join(bundleDir, 'worker.js'),
    compatibilityDate: COMPATIBILITY_DATE,
    compatibilityFlags: ['nodejs_compat'],
    bindings: { SVC_CONFIG: JSON.stringify(config), SVC_DATABASE_URL: dbUrl, SVC_LOG_LEVEL: 'off' },
    port: 0,
  });
  const ready = await mf.ready;
  const readyMs = performance.now() - t0;
  const pids = workerdPids();
  if (pids.length === 0) throw new BenchFailure('no workerd process found under this process after mf.ready');
  return {
    name: 'workerd',
    readyMs,
    base: new URL(ready).origin,
    pids,
    cpuSeconds() {
      // The processes found at start, and any they spawned since.
      const table = processTable();
      const all = new Set(pids);
      for (const p of pids) for (const d of descendants(p, table)) all.add(d);
      let sum = 0;
      for (const p of all) {
        const s = cpuSeconds(p);
        if (s === null && pids.includes(p)) throw new BenchFailure(`workerd ${p} is gone`);
        sum += s ?? 0;
      }
      return sum;
    },
    pin: () => pids.forEach(pinToCoreUnderTest),
    stop: () => mf.dispose(),
  };
}

async function startNode(configPath, dbUrl) {
  const t0 = performance.now();
  const proc = await startProcess({
    name: 'gateway (node)',
    plan: { pinned: false },
    command: process.execPath,
    args: [CLI, 'serve', '--port', '0'],
    // The quietest level it has (workerd runs with SVC_LOG_LEVEL=off).
    env: { SVC_DATABASE_URL: dbUrl, SVC_CONFIG: configPath, HOST: '127.0.0.1', SVC_LOG_LEVEL: 'error' },
    readyPort: (line) => {
      const m = /listening on http:\/\/[^:]+:(\d+)\//.exec(line);
      return m ? Number(m[1]) : null;
    },
  });
  const readyMs = performance.now() - t0;
  return {
    name: 'node',
    readyMs,
    base: `http://127.0.0.1:${proc.port}`,
    pids: [proc.pid],
    cpuSeconds: () => proc.cpuSeconds(),
    pin: () => pinToCoreUnderTest(proc.pid),
    stderrTail: () => proc.stderrTail(),
    stop: () => proc.stop(),
  };
}

// ---------------------------------------------------------------------------------------------------------
// Requests from this process (cold start, round-trip count) and load points (autocannon/wrk).

async function call(target, secret, path, body = null) {
  const res = await fetch(`${target.base}${path}`, {
    method: body === null ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${secret}`, ...(body === null ? {} : { 'content-type': 'application/json' }) },
    ...(body === null ? {} : { body }),
  });
  const text = await res.text();
  if (res.status !== 200) throw new BenchFailure(`${target.name} ${path}: ${res.status} ${text.slice(0, 300)}`);
  return text;
}

async function timed(fn) {
  const t0 = performance.now();
  const value = await fn();
  return { ms: performance.now() - t0, value };
}

async function coldStart(target, secret, bodies) {
  const models = await timed(() => call(target, secret, '/v1/models'));
  const modelsNext = [];
  for (let i = 0; i < COLD_SAMPLES; i++) modelsNext.push((await timed(() => call(target, secret, '/v1/models'))).ms);
  const chat = await timed(() => call(target, secret, '/v1/chat/completions', bodies.nonstream));
  const chatNext = [];
  for (let i = 0; i < COLD_SAMPLES; i++) chatNext.push((await timed(() => call(target, secret, '/v1/chat/completions', bodies.nonstream))).ms);
  const answer = JSON.parse(chat.value);
  return {
    startToReadyMs: target.readyMs,
    firstModelsMs: models.ms,
    nextModelsMedianMs: median(modelsNext),
    firstChatMs: chat.ms,
    nextChatMedianMs: median(chatNext),
    completionTokens: answer.usage?.completion_tokens ?? null,
    finishReason: answer.choices?.[0]?.finish_reason ?? null,
    requests: 2 + 2 * COLD_SAMPLES,
  };
}

async function measurePoints(target, secret, bodies) {
  const url = `${target.base}/v1/chat/completions`;
  const points = {};
  let answered = 0;
  for (const p of POINTS) {
    const body = bodies[p.mode];
    if (WARMUP > 0) {
      const w = await runLoad({ generator, plan, url, body, auth: secret, connections: p.connections, seconds: WARMUP });
      if (w.failed > 0) throw new BenchFailure(`${target.name} ${pointKey(p)} warm-up: ${JSON.stringify(w.errors)} failures\n${target.stderrTail?.() ?? ''}`);
      answered += w.requests;
    }
    const cpu0 = target.cpuSeconds();
    const host0 = benchCpuSeconds();
    const machine0 = machineCpuSeconds();
    const r = await runLoad({ generator, plan, url, body, auth: secret, connections: p.connections, seconds: SECONDS });
    const cpu = target.cpuSeconds() - cpu0;
    const host = benchCpuSeconds() - host0;
    const machine = machineCpuSeconds() - machine0;
    if (r.failed > 0) throw new BenchFailure(`${target.name} ${pointKey(p)}: ${JSON.stringify(r.errors)} failures (of ${r.requests})\n${target.stderrTail?.() ?? ''}`);
    if (r.requests === 0) throw new BenchFailure(`${target.name} ${pointKey(p)}: no request completed`);
    answered += r.requests;
    points[pointKey(p)] = {
      ...p,
      ...r,
      cpuUsPerRequest: (cpu / r.requests) * 1e6,
      cpuUtilisation: cpu / r.seconds,
      benchProcessCpuUsPerRequest: (host / r.requests) * 1e6,
      machineCpuUsPerRequest: (machine / r.requests) * 1e6,
    };
    console.log(
      `  ${target.name.padEnd(8)} ${pointKey(p).padEnd(13)} ${fmt(r.rps, 0).padStart(6)} req/s (${r.requests})  p50 ${fmt(r.p50Ms, 2)} ms  p99 ${fmt(r.p99Ms, 2)} ms  ` +
        `cpu ${fmt((cpu / r.requests) * 1e6, 0)} us/req (${fmt((cpu / r.seconds) * 100, 0)}% of a core)  ` +
        `host ${fmt((host / r.requests) * 1e6, 0)} us/req  machine ${fmt((machine / r.requests) * 1e6, 0)} us/req`,
    );
  }
  return { points, answered };
}

/** Sequential requests of each mode through the counting proxy; per-request figures of the window. */
async function countRoundTrips(target, proxy, secret, bodies) {
  for (let i = 0; i < 20; i++) await call(target, secret, '/v1/chat/completions', bodies.nonstream);
  const out = {};
  let answered = 20;
  for (const mode of ['nonstream', 'stream']) {
    await sleep(500); // the previous requests' connections close (the Worker closes its store after the response)
    const before = proxy.snapshot();
    for (let i = 0; i < COUNT_REQUESTS; i++) await call(target, secret, '/v1/chat/completions', bodies[mode]);
    await sleep(500);
    const after = proxy.snapshot();
    answered += COUNT_REQUESTS;
    const per = (k) => (after[k] - before[k]) / COUNT_REQUESTS;
    out[mode] = {
      requests: COUNT_REQUESTS,
      connectionsPerRequest: per('connections'),
      roundTripsPerRequest: per('flights'),
      statementsPerRequest: per('syncs') + per('queries'),
      parsesPerRequest: per('parses'),
      opaqueConnections: after.opaque - before.opaque,
    };
  }
  return { counts: out, answered };
}

// ---------------------------------------------------------------------------------------------------------

async function main() {
  const started = new Date();
  const config = sandboxConfig();
  const tmp = mkdtempSync(join(tmpdir(), 'svc-bench-edge-config-'));
  const configPath = join(tmp, 'gateway.json');
  writeFileSync(configPath, JSON.stringify(config, null, 2));

  // A prompt whose sandbox answer is cut at exactly max_tokens, so every request answers the same size.
  let prompt = null;
  for (let variant = 0; variant < 50 && prompt === null; variant++) {
    const text = promptText(PROMPT_BYTES, variant);
    const sim = simulateCompletion({ messages: [{ role: 'user', content: text }], max_tokens: MAX_TOKENS }, 'sandbox-fast');
    if (sim.finishReason === 'length' && sim.usage.completionTokens === MAX_TOKENS) prompt = text;
  }
  prompt ??= promptText(PROMPT_BYTES, 0);
  const bodies = {
    nonstream: requestBody({ model: MODEL, prompt, maxTokens: MAX_TOKENS, stream: false }),
    stream: requestBody({ model: MODEL, prompt, maxTokens: MAX_TOKENS, stream: true }),
  };

  const results = {
    started: started.toISOString(),
    machine: { hostname: hostname(), cpus: cpus().length, cpuModel: cpus()[0]?.model ?? null, node: process.version, platform: process.platform },
    method: {
      pinned: plan.pinned,
      coreUnderTest: plan.underTest ?? null,
      loadCore: plan.load ?? null,
      postgresPinned: false,
      loadGenerator: generator.tool,
      secondsPerPoint: SECONDS,
      warmupSeconds: WARMUP,
      points: POINTS.map(pointKey),
      model: MODEL,
      maxTokens: MAX_TOKENS,
      promptBytes: PROMPT_BYTES,
      requestBodyBytes: Buffer.byteLength(bodies.nonstream),
      coldSamples: COLD_SAMPLES,
      countRequests: COUNT_REQUESTS,
      upstream: 'in-process sandbox, pace 0/0',
      accounts: 1,
      workerd: { compatibilityDate: COMPATIBILITY_DATE, logLevel: 'off', database: 'SVC_DATABASE_URL (a new connection per request, no Hyperdrive pool)' },
      node: { logLevel: 'error', database: 'SVC_DATABASE_URL (its pool, 10 connections)' },
      postgres: PG_URL,
    },
    notes: [plan.note, generator.note].filter(Boolean),
    bundle: null,
    targets: {},
  };

  const cleanups = [async () => rmSync(tmp, { recursive: true, force: true })];
  try {
    console.log('building the Worker bundle (wrangler deploy --dry-run)...');
    const built = await buildWorkerBundle();
    cleanups.push(async () => rmSync(built.dir, { recursive: true, force: true }));
    results.bundle = built.bundle;
    console.log(`  worker.js ${built.bundle.workerJsBytes} B, gzip ${built.bundle.workerJsGzipBytes} B (${fmt(built.bundle.buildMs, 0)} ms build)`);

    const starters = {
      workerd: (url) => startWorkerd(built.dir, config, url),
      node: (url) => startNode(configPath, url),
    };
    const proxy = await startCountingProxy();
    cleanups.push(() => proxy.close());

    for (const [name, start] of Object.entries(starters)) {
      const db = await prepareSchema(name);
      cleanups.push(() => db.drop());
      console.log(`${name}:`);
      const target = await start(databaseUrl(db.schema));
      let cold;
      let load;
      try {
        cold = await coldStart(target, db.secret, bodies);
        console.log(
          `  start -> ready ${fmt(cold.startToReadyMs, 0)} ms; GET /v1/models first ${fmt(cold.firstModelsMs, 1)} ms, next ${COLD_SAMPLES} median ` +
            `${fmt(cold.nextModelsMedianMs, 2)} ms; chat first ${fmt(cold.firstChatMs, 1)} ms, next median ${fmt(cold.nextChatMedianMs, 2)} ms`,
        );
        if (cold.completionTokens !== MAX_TOKENS) results.notes.push(`${name}: answers have ${cold.completionTokens} completion tokens, not ${MAX_TOKENS}`);
        target.pin();
        load = await measurePoints(target, db.secret, bodies);
        // The load generator's last requests were cut off mid-flight: give their settlements (the Worker's
        // ctx.waitUntil work) time to finish before the runtime is stopped, so pending holds below are real.
        await sleep(DRAIN_MS);
      } finally {
        await target.stop();
      }

      // The same runtime again, its database reached through the counting proxy.
      const counted = await start(databaseUrl(db.schema, proxy.hostPort));
      let rt;
      try {
        rt = await countRoundTrips(counted, proxy, db.secret, bodies);
      } finally {
        await counted.stop();
      }
      console.log(
        `  PostgreSQL per request (${COUNT_REQUESTS} sequential each): ` +
          Object.entries(rt.counts)
            .map(([m, c]) => `${m} ${fmt(c.roundTripsPerRequest, 2)} round trips, ${fmt(c.statementsPerRequest, 2)} statements, ${fmt(c.parsesPerRequest, 2)} parses, ${fmt(c.connectionsPerRequest, 2)} connections`)
            .join('; '),
      );

      await sleep(DRAIN_MS);
      const ledger = await db.ledger();
      const answered = cold.requests + load.answered + rt.answered;
      results.targets[name] = { coldStart: cold, points: load.points, postgresPerRequest: rt.counts, ledger: { ...ledger, chatRequestsAnswered: answered - 1 - COLD_SAMPLES } };
      console.log(`  ledger: ${ledger.usageRequests} usage records for ${answered - 1 - COLD_SAMPLES} chat completions answered, ${ledger.pendingHolds} pending holds`);
      if (ledger.usageRequests < answered - 1 - COLD_SAMPLES) throw new BenchFailure(`${name}: fewer usage records than chat completions answered`);
    }
  } finally {
    for (const c of cleanups.reverse()) await c().catch((e) => console.error(`cleanup: ${e.message}`));
    await admin.end({ timeout: 5 });
  }

  results.ratios = ratios(results);
  printTable(results);
  const outDir = join(ROOT, 'bench/results');
  mkdirSync(outDir, { recursive: true });
  const out = opts.out ?? join(outDir, `edge-${started.toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(out, JSON.stringify(results, null, 2) + '\n');
  console.log(`\nresults: ${out}`);
}

/** workerd / Node, point by point (req/s, CPU per request) and for the cold start. */
function ratios(results) {
  const w = results.targets.workerd;
  const n = results.targets.node;
  const points = {};
  for (const p of POINTS) {
    const k = pointKey(p);
    points[k] = {
      rps: w.points[k].rps / n.points[k].rps,
      cpuUsPerRequest: w.points[k].cpuUsPerRequest / n.points[k].cpuUsPerRequest,
      machineCpuUsPerRequest: w.points[k].machineCpuUsPerRequest / n.points[k].machineCpuUsPerRequest,
      p50Ms: w.points[k].p50Ms / n.points[k].p50Ms,
    };
  }
  return { points };
}

function printTable(results) {
  const b = results.bundle;
  const w = results.targets.workerd;
  const n = results.targets.node;
  console.log(`\nbundle: worker.js ${b.workerJsBytes} B raw, ${b.workerJsGzipBytes} B gzip (${b.gzipLevel})` +
    (b.wranglerReported ? `; wrangler: ${b.wranglerReported.totalUploadKiB} KiB / gzip ${b.wranglerReported.gzipKiB} KiB` : ''));

  const table = (head, lines) => {
    const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
    const row = (cells) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
    console.log(row(head));
    console.log(widths.map((x) => '-'.repeat(x)).join('  '));
    for (const l of lines) console.log(row(l));
  };

  console.log('\ncold start (ms)');
  const cold = [
    ['start -> ready', 'startToReadyMs'],
    ['GET /v1/models, first', 'firstModelsMs'],
    [`GET /v1/models, median of next ${COLD_SAMPLES}`, 'nextModelsMedianMs'],
    ['chat completion, first', 'firstChatMs'],
    [`chat completion, median of next ${COLD_SAMPLES}`, 'nextChatMedianMs'],
  ];
  table(['', 'workerd', 'node', 'workerd/node'], cold.map(([label, k]) => [label, fmt(w.coldStart[k], 2), fmt(n.coldStart[k], 2), fmt(w.coldStart[k] / n.coldStart[k], 2)]));

  console.log('\nload (one account; cpu = the process(es) under test; machine = every core, load generator and PostgreSQL included)');
  table(
    ['point', 'workerd req/s', 'node req/s', 'x rps', 'workerd cpu us/req', 'node cpu us/req', 'x cpu', 'workerd p50 ms', 'node p50 ms', 'workerd machine us/req', 'node machine us/req', 'mf host us/req'],
    POINTS.map((p) => {
      const k = pointKey(p);
      const a = w.points[k];
      const c = n.points[k];
      const r = results.ratios.points[k];
      return [k, fmt(a.rps, 0), fmt(c.rps, 0), fmt(r.rps, 2), fmt(a.cpuUsPerRequest, 0), fmt(c.cpuUsPerRequest, 0), fmt(r.cpuUsPerRequest, 2), fmt(a.p50Ms, 2), fmt(c.p50Ms, 2), fmt(a.machineCpuUsPerRequest, 0), fmt(c.machineCpuUsPerRequest, 0), fmt(a.benchProcessCpuUsPerRequest, 0)];
    }),
  );

  console.log(`\nPostgreSQL per request (${COUNT_REQUESTS} sequential requests, counting proxy)`);
  const lines = [];
  for (const [name, t] of [['workerd', w], ['node', n]]) {
    for (const [mode, c] of Object.entries(t.postgresPerRequest)) {
      lines.push([`${name} ${mode}`, fmt(c.roundTripsPerRequest, 2), fmt(c.statementsPerRequest, 2), fmt(c.parsesPerRequest, 2), fmt(c.connectionsPerRequest, 2)]);
    }
  }
  table(['', 'round trips', 'statements', 'parses', 'connections'], lines);
  if (results.notes.length > 0) console.log('\nnotes:\n  ' + results.notes.join('\n  '));
}

main().catch((e) => {
  console.error(e instanceof BenchFailure ? `BENCH FAILED: ${e.message}` : e);
  process.exit(1);
});
