#!/usr/bin/env node
// Soak: the gateway serves `requests` requests (default 1,000,000) with full metering, and its resident set
// is sampled after every slice of load, so a leak shows as a slope. Setup as in bench/overhead.mjs
// (upstream and load generator on core 1, the gateway alone on core 0).
//
//   npm run bench:soak                 (= npm run build && node bench/soak.mjs)
//   node bench/soak.mjs [requests] [--store sqlite|postgres] [--mode nonstream|stream] [--connections 128]
//                       [--slice-seconds 10] [--accounts 1] [--out FILE]
//
// Prints requests served and RSS after each slice, then the growth over the second half of the run (after
// warm-up and the first heap growth), and writes the curve to bench/results/soak-<time>.json.
// Fails on any status >= 400 or socket error, or if the ledger disagrees with what was served.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadGenerator, runLoad } from './lib/load.mjs';
import { corePlan } from './lib/processes.mjs';
import { ledgerSummary, prepareDatabase, startGatewayProcess, startUpstream } from './lib/targets.mjs';
import { fixedSizePrompt, requestBody } from './lib/workload.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MODEL = 'svc-fast';
const { values: opts, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    store: { type: 'string', default: 'sqlite' },
    mode: { type: 'string', default: 'nonstream' },
    connections: { type: 'string', default: '128' },
    'slice-seconds': { type: 'string', default: '10' },
    upstream: { type: 'string', default: 'replay' },
    accounts: { type: 'string', default: '1' },
    'max-tokens': { type: 'string', default: '16' },
    'prompt-bytes': { type: 'string', default: '1024' },
    out: { type: 'string' },
  },
});
const TARGET = Number(positionals[0] ?? 1_000_000);
if (!Number.isInteger(TARGET) || TARGET < 1) throw new Error(`requests must be a positive integer, got ${positionals[0]}`);
/** Growth above this over the second half of the run is reported as a leak. */
const GROWTH_LIMIT_MB = 10;

/** Least-squares slope of y over x. */
function slope(points, x, y) {
  const n = points.length;
  const mx = points.reduce((s, p) => s + x(p), 0) / n;
  const my = points.reduce((s, p) => s + y(p), 0) / n;
  const num = points.reduce((s, p) => s + (x(p) - mx) * (y(p) - my), 0);
  const den = points.reduce((s, p) => s + (x(p) - mx) ** 2, 0);
  return den === 0 ? 0 : num / den;
}

async function main() {
  const plan = corePlan();
  const generator = loadGenerator();
  for (const note of [plan.note, generator.note]) if (note) console.log(`NOTE: ${note}`);
  const started = new Date();
  const upstream = await startUpstream(plan, opts.upstream);
  let db = null;
  let gw = null;
  try {
    const maxTokens = Number(opts['max-tokens']);
    const { prompt } = await fixedSizePrompt(upstream.port, { model: MODEL, promptBytes: Number(opts['prompt-bytes']), maxTokens });
    db = await prepareDatabase(opts.store, { upstreamPort: upstream.port, model: MODEL, accounts: Number(opts.accounts) });
    gw = await startGatewayProcess(plan, db);
    const url = `http://127.0.0.1:${gw.port}/v1/chat/completions`;
    const body = requestBody({ model: MODEL, prompt, maxTokens, stream: opts.mode === 'stream' });
    const connections = Number(opts.connections);
    const sliceSeconds = Number(opts['slice-seconds']);

    const curve = [{ requests: 0, seconds: 0, ...gw.memory() }];
    console.log(`soak: ${TARGET.toLocaleString()} ${opts.mode} requests at ${connections} connections on ${opts.store}`);
    console.log(`${'requests'.padStart(10)} ${'elapsed s'.padStart(9)} ${'req/s'.padStart(7)} ${'rss MB'.padStart(7)} ${'peak MB'.padStart(8)}`);
    let served = 0;
    let elapsed = 0;
    while (served < TARGET) {
      // The last slice is shortened to about what is left, from the rate so far.
      const rate = served > 0 ? served / elapsed : null;
      const seconds = rate === null ? sliceSeconds : Math.max(1, Math.min(sliceSeconds, Math.ceil((TARGET - served) / rate)));
      const r = await runLoad({ generator, plan, url, body, auth: db.secrets, connections, seconds });
      if (r.failed > 0) throw new Error(`after ${served} requests: ${JSON.stringify(r.errors)} failures\n${gw.stderrTail()}`);
      served += r.requests;
      elapsed += r.seconds;
      // As in bench/overhead.mjs: the database's backends for the gateway's connections go to the load core.
      if (opts.store === 'postgres' && plan.pinned) await db.pinBackends(plan.load);
      const m = gw.memory();
      curve.push({ requests: served, seconds: elapsed, rps: r.rps, p99Ms: r.p99Ms, ...m });
      console.log(
        `${served.toLocaleString().padStart(10)} ${elapsed.toFixed(0).padStart(9)} ${r.rps.toFixed(0).padStart(7)} ${m.rssMb.toFixed(1).padStart(7)} ${m.peakRssMb.toFixed(1).padStart(8)}`,
      );
    }
    await gw.stop();
    gw = null;

    const ledger = await ledgerSummary(db);
    const verify = db.verifyLedger();
    const secondHalf = curve.filter((p) => p.requests >= served / 2);
    const growthMb = secondHalf.length > 1 ? secondHalf[secondHalf.length - 1].rssMb - secondHalf[0].rssMb : 0;
    const mbPer100k = secondHalf.length > 2 ? slope(secondHalf, (p) => p.requests, (p) => p.rssMb) * 100_000 : 0;
    const result = {
      started: started.toISOString(),
      store: opts.store,
      mode: opts.mode,
      connections,
      requests: served,
      seconds: elapsed,
      peakRssMb: Math.max(...curve.map((p) => p.peakRssMb || p.rssMb)),
      secondHalf: { growthMb, mbPer100kRequests: mbPer100k, steady: Math.abs(growthMb) <= GROWTH_LIMIT_MB },
      ledger: { ...ledger, verified: verify.ok },
      curve,
    };
    console.log(
      `\nserved ${served.toLocaleString()} requests in ${elapsed.toFixed(0)} s; peak RSS ${result.peakRssMb.toFixed(1)} MB; ` +
        `second half: ${growthMb >= 0 ? '+' : ''}${growthMb.toFixed(1)} MB (${mbPer100k.toFixed(2)} MB per 100k requests): ` +
        `${result.secondHalf.steady ? 'steady' : 'GROWING'}`,
    );
    console.log(`ledger: ${ledger.usageRequests} usage records, ${ledger.pendingHolds} pending holds, verify ${verify.ok ? 'ok' : 'FAILED'}`);
    const outDir = join(ROOT, 'bench/results');
    mkdirSync(outDir, { recursive: true });
    const out = opts.out ?? join(outDir, `soak-${started.toISOString().replace(/[:.]/g, '-')}.json`);
    writeFileSync(out, JSON.stringify(result, null, 2) + '\n');
    console.log(`results: ${out}`);
    if (!verify.ok || ledger.usageRequests < served) throw new Error('the ledger does not account for every request served');
    if (!result.secondHalf.steady) process.exitCode = 1;
  } finally {
    if (gw) await gw.stop();
    await upstream.stop();
    if (db) await db.cleanup();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
