#!/usr/bin/env node
// The gateway's overhead against the floor of what Node can do, measured in one run (docs/performance.md).
//
//   npm run bench                     (= npm run build && node bench/overhead.mjs)
//   node bench/overhead.mjs [--seconds 10] [--warmup 3] [--stores sqlite,postgres] [--connections 32,128]
//                           [--modes nonstream,stream] [--upstream replay|sandbox] [--max-tokens 16]
//                           [--prompt-bytes 1024] [--accounts 1] [--gateway-node-args "..."] [--peers portkey]
//                           [--free-ledger] [--no-limit] [--limit-upstream sse|json] [--out FILE]
//
// --gateway-node-args passes Node/V8 options to the gateway process only (say "--max-old-space-size=96",
// for the memory trade-off in docs/performance.md); the floor runs as always.
//
// --peers portkey adds another gateway for context, measured like the others right after the floor:
// Portkey's AI gateway (@portkey-ai/gateway 1.15.2 from npm, with @hono/node-server 1.14.1, the last its
// streaming works with; bench/lib/peers.mjs), in front of the same upstream through its OpenAI provider
// with a custom host. It does no auth and no metering. It is installed on first use into .cache/bench-peers/
// (gitignored; never a dependency of the project), and its answer is checked against the upstream's
// before it is measured. Default: no peers.
//
// The limit gateway (../shared/bench/limit-gateway.mjs; SVC_BENCH_LIMIT_GATEWAY overrides the path) is a
// reference target measured right after the floor, on the same core, upstream and points: the least a Node
// metered gateway does per request (auth against SQLite, a durable reserve and settle, the upstream call,
// the `svc` metadata), hand-written, with a SQLite file of its own in a temporary directory and the key from
// its ready line. With --limit-upstream sse (the default) it gathers a non-streaming answer from an upstream
// stream, as the product does (an openai-compatible provider streams from its upstream unless
// `upstream_streaming: false`); json makes that one plain JSON call. Every gateway figure is then reported
// as a ratio to the floor and to the limit gateway. --no-limit skips it.
// With postgres among --stores, the limit gateway on PostgreSQL (bench/servers/limit-gateway-postgres.mjs,
// `limit-postgres`: the same work with its ledger in a schema of its own, its server backends pinned like the
// gateway's) is measured too, and the gateway on PostgreSQL is a ratio to it rather than to the SQLite one:
// the PostgreSQL goal is against a limit on the same database.
//
// --free-ledger adds, after each store's gateway, the same gateway with its ledger answering at once
// (bench/lib/free-ledger.mjs, preloaded): `gateway-<store>-free-ledger`, the most any ledger design could
// give. It is a bound for the analysis in docs/performance.md, never checked against the goals, and nothing
// it serves is charged.
//
// On loopback: the upstream (bench/servers/upstream.mjs) pinned with the load generator on core 1; then,
// one after the other and each alone on core 0, the floor proxy (bench/servers/floor-proxy.mjs) and the
// gateway (`svc-gateway serve`, full metering) on each store. Every target gets the same points: each mode
// at each connection count, plus one connection (sequential latency). The upstream is also called
// directly, for the added-latency baseline and to show whether it had headroom.
// Prints a table and writes bench/results/overhead-<time>.json. Any answer with status >= 400, or any
// socket error, fails the run.
import { mkdirSync, writeFileSync } from 'node:fs';
import { hostname, cpus } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { corePlan, pinned, rssSampler, runCommand } from './lib/processes.mjs';
import { loadGenerator, runLoad } from './lib/load.mjs';
import { PEERS, checkPeerAnswers, installPeer, startPeer } from './lib/peers.mjs';
import {
  FREE_LEDGER_NODE_ARGS,
  LIMIT_GATEWAY,
  ledgerSummary,
  prepareDatabase,
  startFloor,
  startGatewayProcess,
  startLimitGateway,
  startLimitGatewayPostgres,
  startUpstream,
} from './lib/targets.mjs';
import { fixedSizePrompt, requestBody } from './lib/workload.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MODEL = 'svc-fast';
const list = (s) => s.split(',').map((x) => x.trim()).filter(Boolean);

const { values: opts } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '3' },
    stores: { type: 'string', default: 'sqlite,postgres' },
    connections: { type: 'string', default: '32,128' },
    modes: { type: 'string', default: 'nonstream,stream' },
    upstream: { type: 'string', default: 'replay' },
    accounts: { type: 'string', default: '1' },
    'max-tokens': { type: 'string', default: '16' },
    'prompt-bytes': { type: 'string', default: '1024' },
    'gateway-node-args': { type: 'string', default: '' },
    peers: { type: 'string', default: '' },
    'free-ledger': { type: 'boolean', default: false },
    'no-limit': { type: 'boolean', default: false },
    'limit-upstream': { type: 'string', default: 'sse' },
    out: { type: 'string' },
  },
});
const SECONDS = Number(opts.seconds);
const WARMUP = Number(opts.warmup);
const STORES = list(opts.stores);
const CONNECTIONS = list(opts.connections).map(Number);
const MODES = list(opts.modes);
const MAX_TOKENS = Number(opts['max-tokens']);
const PROMPT_BYTES = Number(opts['prompt-bytes']);
const GATEWAY_NODE_ARGS = opts['gateway-node-args'].split(' ').filter(Boolean);
const PEER_NAMES = list(opts.peers);
for (const m of MODES) if (m !== 'nonstream' && m !== 'stream') throw new Error(`--modes: unknown mode ${m}`);
for (const s of STORES) if (s !== 'sqlite' && s !== 'postgres') throw new Error(`--stores: unknown store ${s}`);
if (!['replay', 'sandbox'].includes(opts.upstream)) throw new Error('--upstream must be replay or sandbox');
const WITH_LIMIT = !opts['no-limit'];
if (!['sse', 'json'].includes(opts['limit-upstream'])) throw new Error('--limit-upstream must be sse or json');
for (const p of PEER_NAMES) if (!(p in PEERS)) throw new Error(`--peers: unknown peer ${p} (known: ${Object.keys(PEERS).join(', ')})`);

const plan = corePlan();
const generator = loadGenerator();
for (const note of [plan.note, generator.note]) if (note) console.log(`NOTE: ${note}`);

/** The points every target runs: throughput at each connection count, then one connection (once, if asked for). */
const POINTS = MODES.flatMap((mode) => [...new Set([...CONNECTIONS, 1])].map((connections) => ({ mode, connections })));
const pointKey = (p) => `${p.mode}@${p.connections}`;

class BenchFailure extends Error {}

/**
 * Runs every point against one target process: a warm-up, then the measured run, with the process's CPU
 * time and resident set sampled around it. `auth`: the gateway's keys; `headers`: what a peer needs on
 * every request.
 */
async function measure(name, proc, bodies, { auth = null, headers = {}, afterWarmup = async () => {} } = {}) {
  const url = `http://127.0.0.1:${proc.port}/v1/chat/completions`;
  const points = {};
  for (const p of POINTS) {
    const body = bodies[p.mode];
    if (WARMUP > 0) {
      const w = await runLoad({ generator, plan, url, body, auth, headers, connections: p.connections, seconds: WARMUP });
      if (w.failed > 0) throw new BenchFailure(`${name} ${pointKey(p)} warm-up: ${JSON.stringify(w.errors)} failures\n${proc.stderrTail?.() ?? ''}`);
    }
    await afterWarmup();
    const cpu0 = proc.cpuSeconds();
    const rss = rssSampler(proc);
    const r = await runLoad({ generator, plan, url, body, auth, headers, connections: p.connections, seconds: SECONDS });
    const peakRssMb = rss.stop();
    const cpu = proc.cpuSeconds() - cpu0;
    if (r.failed > 0) throw new BenchFailure(`${name} ${pointKey(p)}: ${JSON.stringify(r.errors)} failures (of ${r.requests})\n${proc.stderrTail?.() ?? ''}`);
    if (r.requests === 0) throw new BenchFailure(`${name} ${pointKey(p)}: no request completed`);
    points[pointKey(p)] = {
      ...p,
      ...r,
      cpuUsPerRequest: (cpu / r.requests) * 1e6,
      cpuUtilisation: cpu / r.seconds,
      peakRssMb,
    };
    console.log(
      `  ${name.padEnd(18)} ${pointKey(p).padEnd(14)} ${fmt(r.rps, 0).padStart(7)} req/s  p50 ${fmt(r.p50Ms, 3)} ms  p99 ${fmt(r.p99Ms, 3)} ms  ` +
        `cpu ${fmt((cpu / r.requests) * 1e6, 0)} us/req (${fmt((cpu / r.seconds) * 100, 0)}% of a core)  rss ${fmt(peakRssMb, 1)} MB`,
    );
  }
  return { points, peakRssMb: proc.memory().peakRssMb };
}

function fmt(n, digits) {
  return Number.isFinite(n) ? n.toFixed(digits) : '-';
}

async function main() {
  const started = new Date();
  const results = {
    started: started.toISOString(),
    machine: { hostname: hostname(), cpus: cpus().length, cpuModel: cpus()[0]?.model ?? null, node: process.version, platform: process.platform },
    method: {
      pinned: plan.pinned,
      coreUnderTest: plan.underTest ?? null,
      loadCore: plan.load ?? null,
      loadGenerator: generator.tool,
      upstream: opts.upstream,
      secondsPerPoint: SECONDS,
      warmupSeconds: WARMUP,
      model: MODEL,
      maxTokens: MAX_TOKENS,
      promptBytes: PROMPT_BYTES,
      accounts: Number(opts.accounts),
      gatewayNodeArgs: GATEWAY_NODE_ARGS,
      freeLedger: opts['free-ledger'],
      // The reference target every gateway figure is also a ratio to (null with --no-limit).
      limit: WITH_LIMIT ? { path: LIMIT_GATEWAY, upstream: opts['limit-upstream'] } : null,
      peers: Object.fromEntries(PEER_NAMES.map((p) => [p, { packages: PEERS[p].packages }])),
      // The PostgreSQL server's backends serving the gateway share the load core with wrk and the upstream.
      databaseBackendsCore: plan.pinned ? plan.load : null,
    },
    notes: [plan.note, generator.note].filter(Boolean),
    targets: {},
  };

  // Before anything runs: an install takes seconds of CPU on both cores.
  for (const p of PEER_NAMES) installPeer(p);

  const upstream = await startUpstream(plan, opts.upstream);
  const cleanups = [() => upstream.stop()];
  try {
    const { prompt, answerChars } = await fixedSizePrompt(upstream.port, { model: MODEL, promptBytes: PROMPT_BYTES, maxTokens: MAX_TOKENS });
    const bodies = {
      nonstream: requestBody({ model: MODEL, prompt, maxTokens: MAX_TOKENS, stream: false }),
      stream: requestBody({ model: MODEL, prompt, maxTokens: MAX_TOKENS, stream: true }),
    };
    results.method.answer = { completionTokens: MAX_TOKENS, contentChars: answerChars, requestBodyBytes: Buffer.byteLength(bodies.nonstream) };
    console.log(`answer: ${MAX_TOKENS} tokens (${answerChars} characters of content), request body ${results.method.answer.requestBodyBytes} B`);

    // The upstream called directly (pinned where it is, core 1, sharing it with the load generator).
    console.log('upstream, called directly:');
    results.targets.upstream = await measure('upstream', upstream, bodies);

    const floor = await startFloor(plan, upstream.port);
    try {
      console.log('floor proxy:');
      results.targets.floor = await measure('floor', floor, bodies);
    } finally {
      await floor.stop();
    }

    if (WITH_LIMIT) {
      const limit = await startLimitGateway(plan, upstream.port, { model: MODEL, upstream: opts['limit-upstream'] });
      cleanups.push(() => limit.cleanup());
      results.method.limit.options = limit.options;
      let stopped = null;
      try {
        console.log(`limit gateway (--upstream ${opts['limit-upstream']}, its own SQLite file):`);
        const headers = { authorization: `Bearer ${limit.key}` };
        const problems = await checkPeerAnswers(limit.port, headers, bodies, upstream.port);
        if (problems.length > 0) throw new BenchFailure(`the limit gateway does not give the upstream's answer:\n  ${problems.join('\n  ')}\n${limit.stderrTail()}`);
        results.targets.limit = await measure('limit', limit, bodies, { auth: limit.key });
      } finally {
        stopped = await limit.stop();
      }
      // With --commit group it says on SIGTERM how many ledger writes each COMMIT held on average.
      const said = limit.stderrTail().trim().split('\n').filter(Boolean).pop();
      if (results.targets.limit && said) results.targets.limit.onStop = said;
      if (stopped && stopped.code !== 0 && stopped.signal !== 'SIGTERM') console.log(`  limit gateway exited ${stopped.signal ?? stopped.code}`);
    }
    if (WITH_LIMIT && STORES.includes('postgres')) {
      const limit = await startLimitGatewayPostgres(plan, upstream.port, { model: MODEL });
      cleanups.push(() => limit.cleanup());
      try {
        console.log('limit gateway on postgres (its own schema):');
        const headers = { authorization: `Bearer ${limit.key}` };
        const problems = await checkPeerAnswers(limit.port, headers, bodies, upstream.port);
        if (problems.length > 0) throw new BenchFailure(`the PostgreSQL limit gateway does not give the upstream's answer:\n  ${problems.join('\n  ')}\n${limit.stderrTail()}`);
        const pinDatabase = async () => {
          if (plan.pinned) await limit.pinBackends(plan.load);
        };
        results.targets['limit-postgres'] = await measure('limit-postgres', limit, bodies, { auth: limit.key, afterWarmup: pinDatabase });
      } finally {
        await limit.stop();
      }
    }

    for (const name of PEER_NAMES) {
      const { proc, headers } = await startPeer(name, plan, upstream.port);
      try {
        console.log(`peer ${name} (no auth, no metering):`);
        const problems = await checkPeerAnswers(proc.port, headers, bodies, upstream.port);
        if (problems.length > 0) throw new BenchFailure(`${name} does not give the upstream's answer:\n  ${problems.join('\n  ')}\n${proc.stderrTail()}`);
        results.targets[name] = await measure(name, proc, bodies, { headers });
      } finally {
        await proc.stop();
      }
    }

    for (const store of STORES) {
      const db = await prepareDatabase(store, { upstreamPort: upstream.port, model: MODEL, accounts: Number(opts.accounts) });
      cleanups.push(() => db.cleanup());
      const gw = await startGatewayProcess(plan, db, GATEWAY_NODE_ARGS);
      let measured;
      try {
        console.log(`gateway on ${store}:`);
        const pinDatabase = async () => {
          if (plan.pinned && store === 'postgres') await db.pinBackends(plan.load);
        };
        measured = await measure(`gateway-${store}`, gw, bodies, { auth: db.secrets, afterWarmup: pinDatabase });
      } finally {
        await gw.stop();
      }
      const ledger = await ledgerSummary(db);
      const verify = db.verifyLedger();
      const completed = Object.values(measured.points).reduce((n, p) => n + p.requests, 0);
      results.targets[`gateway-${store}`] = { ...measured, ledger: { ...ledger, verified: verify.ok, measuredRequests: completed } };
      console.log(
        `  ledger: ${ledger.usageRequests} usage records (measured requests ${completed}, plus warm-ups), ${ledger.pendingHolds} pending holds, ` +
          `ledger verify ${verify.ok ? 'ok' : 'FAILED'}`,
      );
      if (!verify.ok) throw new BenchFailure(`gateway-${store}: ledger verify found ${verify.findings.length} inconsistencies`);
      if (ledger.usageRequests < completed) throw new BenchFailure(`gateway-${store}: fewer usage records than answered requests`);

      if (opts['free-ledger']) {
        const name = `gateway-${store}-free-ledger`;
        const free = await startGatewayProcess(plan, db, [...GATEWAY_NODE_ARGS, ...FREE_LEDGER_NODE_ARGS]);
        try {
          console.log(`gateway on ${store}, ledger free (a bound: nothing is charged):`);
          results.targets[name] = await measure(name, free, bodies, { auth: db.secrets });
        } finally {
          await free.stop();
        }
      }
    }

    const rd = pinned(plan, plan.underTest ?? null, process.execPath, [join(ROOT, 'bench/routing-decision.mjs'), '--json']);
    results.routingDecision = JSON.parse(runCommand(rd.command, rd.args));
  } finally {
    for (const c of cleanups.reverse()) await c().catch((e) => console.error(`cleanup: ${e.message}`));
  }

  results.summary = summarize(results);
  results.goals = goals(results);
  printTable(results);
  const outDir = join(ROOT, 'bench/results');
  mkdirSync(outDir, { recursive: true });
  const out = opts.out ?? join(outDir, `overhead-${started.toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(out, JSON.stringify(results, null, 2) + '\n');
  console.log(`\nresults: ${out}`);
}

/** The limit a target is a ratio to: on PostgreSQL, the PostgreSQL limit gateway when it was measured. */
function limitFor(results, target) {
  const onPostgres = target.startsWith('gateway-postgres') && results.targets['limit-postgres'] !== undefined;
  return onPostgres ? 'limit-postgres' : 'limit';
}

/**
 * Every target's figures next to the floor's and, when it was measured, the limit gateway's, point by
 * point: `...Ratio` to the floor, `...RatioLimit` to the limit gateway (absent with --no-limit).
 */
function summarize(results) {
  const floor = results.targets.floor;
  const direct = results.targets.upstream;
  const rows = [];
  for (const [name, t] of Object.entries(results.targets)) {
    const limit = results.targets[limitFor(results, name)] ?? null;
    for (const p of POINTS) {
      const k = pointKey(p);
      const x = t.points[k];
      const f = floor.points[k];
      const row = {
        target: name,
        point: k,
        rps: x.rps,
        p50Ms: x.p50Ms,
        p99Ms: x.p99Ms,
        cpuUsPerRequest: x.cpuUsPerRequest,
        peakRssMb: x.peakRssMb,
        bytesPerResponse: x.bytesPerResponse,
        rpsRatio: x.rps / f.rps,
        p50Ratio: x.p50Ms / f.p50Ms,
        p99Ratio: x.p99Ms / f.p99Ms,
        cpuRatio: x.cpuUsPerRequest / f.cpuUsPerRequest,
        rssRatio: x.peakRssMb / f.peakRssMb,
      };
      const l = limit?.points[k];
      if (l) {
        Object.assign(row, {
          rpsRatioLimit: x.rps / l.rps,
          p50RatioLimit: x.p50Ms / l.p50Ms,
          p99RatioLimit: x.p99Ms / l.p99Ms,
          cpuRatioLimit: x.cpuUsPerRequest / l.cpuUsPerRequest,
          rssRatioLimit: x.peakRssMb / l.peakRssMb,
        });
      }
      if (p.connections === 1 && name !== 'upstream') {
        const base = direct.points[k].p50Ms;
        row.addedP50Ms = x.p50Ms - base;
        row.addedP50Ratio = row.addedP50Ms / (f.p50Ms - base);
        if (l) row.addedP50RatioLimit = row.addedP50Ms / (l.p50Ms - base);
      }
      rows.push(row);
    }
  }
  return rows;
}

/** The goals, checked on this run's figures (trial figures on a shared machine are indicative only). */
function goals(results) {
  const rows = results.summary;
  const pick = (target, pred) => rows.filter((r) => r.target === target && pred(r));
  const out = [];
  const throughput = (target, mode, min) => {
    const rs = pick(target, (r) => r.point.startsWith(`${mode}@`) && !r.point.endsWith('@1'));
    if (rs.length === 0) return;
    const worst = Math.min(...rs.map((r) => r.rpsRatio));
    out.push({ goal: `${target} ${mode} throughput >= ${min * 100}% of the floor`, value: worst, pass: worst >= min });
  };
  for (const mode of MODES) throughput('gateway-sqlite', mode, 0.6);
  for (const mode of MODES) throughput('gateway-postgres', mode, 0.35);
  for (const target of ['gateway-sqlite', 'gateway-postgres']) {
    for (const r of pick(target, (r) => r.point.endsWith('@1'))) {
      out.push({ goal: `${target} ${r.point.split('@')[0]} sequential added p50 <= 0.25 ms`, value: r.addedP50Ms, pass: r.addedP50Ms <= 0.25 });
    }
    const at128 = pick(target, (r) => r.point.endsWith('@128'));
    if (at128.length > 0) {
      const peak = Math.max(...at128.map((r) => r.peakRssMb));
      out.push({ goal: `${target} peak RSS at 128 connections <= 150 MB`, value: peak, pass: peak <= 150 });
    }
  }
  // Issue 20: against the limit gateway of the same run.
  if (results.targets.limit) {
    const againstLimit = (target, mode, min) => {
      const rs = pick(target, (r) => r.point.startsWith(`${mode}@`) && !r.point.endsWith('@1'));
      if (rs.length === 0) return;
      const worst = Math.min(...rs.map((r) => r.rpsRatioLimit));
      out.push({ goal: `${target} ${mode} throughput >= ${min}x the limit gateway's`, value: worst, pass: worst >= min });
    };
    for (const mode of MODES) againstLimit('gateway-sqlite', mode, 0.8);
    // rpsRatioLimit is to the PostgreSQL limit gateway when it was measured (limitFor).
    for (const mode of MODES) againstLimit('gateway-postgres', mode, 0.5);
    for (const target of ['gateway-sqlite', 'gateway-postgres']) {
      const limitAt128 = pick(limitFor(results, target), (r) => r.point.endsWith('@128'));
      for (const r of pick(target, (r) => r.point.endsWith('@1'))) {
        out.push({ goal: `${target} ${r.point.split('@')[0]} sequential added p50 <= 1.5x the limit gateway's`, value: r.addedP50RatioLimit, pass: r.addedP50RatioLimit <= 1.5 });
      }
      const at128 = pick(target, (r) => r.point.endsWith('@128'));
      if (at128.length > 0 && limitAt128.length > 0) {
        const ratio = Math.max(...at128.map((r) => r.peakRssMb)) / Math.max(...limitAt128.map((r) => r.peakRssMb));
        out.push({ goal: `${target} peak RSS at 128 connections <= 1.3x the limit gateway's`, value: ratio, pass: ratio <= 1.3 });
      }
    }
  }
  if (results.routingDecision) {
    const v = results.routingDecision.worstAddedP99Us;
    out.push({ goal: 'svc-auto routing decision added p99 <= 50 us (4 KB prompt)', value: v, pass: v <= 50 });
  }
  return out;
}

function printTable(results) {
  // With the limit gateway measured, throughput, CPU, RSS and added p50 each get a ratio to it as well.
  const withLimit = Boolean(results.targets.limit);
  const vsLimit = (v) => (withLimit ? [fmt(v, 2)] : []);
  const added = (r, v) => (r.addedP50Ms === undefined ? '' : fmt(v, 2));
  const head = [
    'target', 'point', 'req/s', 'x floor', ...(withLimit ? ['x limit'] : []), 'p50 ms', 'x floor', 'p99 ms', 'x floor',
    'cpu us/req', 'x floor', ...(withLimit ? ['x limit'] : []), 'rss MB', ...(withLimit ? ['x floor', 'x limit'] : []),
    'added p50 ms', ...(withLimit ? ['x floor', 'x limit'] : []), 'bytes/resp',
  ];
  const lines = results.summary.map((r) => [
    r.target,
    r.point,
    fmt(r.rps, 0),
    fmt(r.rpsRatio, 2),
    ...vsLimit(r.rpsRatioLimit),
    fmt(r.p50Ms, 3),
    fmt(r.p50Ratio, 2),
    fmt(r.p99Ms, 3),
    fmt(r.p99Ratio, 2),
    fmt(r.cpuUsPerRequest, 0),
    fmt(r.cpuRatio, 2),
    ...vsLimit(r.cpuRatioLimit),
    fmt(r.peakRssMb, 1),
    ...(withLimit ? [fmt(r.rssRatio, 2), fmt(r.rssRatioLimit, 2)] : []),
    r.addedP50Ms === undefined ? '' : fmt(r.addedP50Ms, 3),
    ...(withLimit ? [added(r, r.addedP50Ratio), added(r, r.addedP50RatioLimit)] : []),
    String(r.bytesPerResponse),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const row = (cells) => cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  console.log('\n' + row(head));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  let last = null;
  for (const l of lines) {
    if (last !== null && l[0] !== last) console.log('');
    last = l[0];
    console.log(row(l));
  }
  console.log('\npeak RSS over the whole run (VmHWM): ' +
    Object.entries(results.targets).map(([n, t]) => `${n} ${fmt(t.peakRssMb, 1)} MB`).join(', '));
  if (results.routingDecision) {
    const rd = results.routingDecision;
    console.log('svc-auto routing decision (4 KB prompts): ' +
      Object.entries(rd.prompts).map(([k, v]) => `${k} p50 +${fmt(v.addedP50Us, 1)} us / p99 +${fmt(v.addedP99Us, 1)} us`).join(', ') +
      (rd.machineP99Us === undefined ? '' : `; a plain loop as long, alternated with it: p99 ${fmt(rd.machineP99Us, 1)} us (the machine's own tail)`));
  }
  console.log('\ngoals (this run):');
  for (const g of results.goals) console.log(`  ${g.pass ? 'met    ' : 'NOT MET'}  ${g.goal}: ${fmt(g.value, 3)}`);
}

main().catch((e) => {
  console.error(e instanceof BenchFailure ? `BENCH FAILED: ${e.message}` : e);
  process.exit(1);
});
