#!/usr/bin/env node
// A CPU profile of the gateway's hot path under load: `svc-gateway serve` runs with --cpu-prof, pinned to
// core 0, while the load generator drives it from core 1 (upstream and setup as in bench/overhead.mjs);
// then the top functions by self time, and the same grouped by file or package.
//
//   npm run bench:profile      (= npm run build && node bench/profile.mjs)
//   node bench/profile.mjs [--store sqlite|postgres] [--modes nonstream,stream] [--seconds 10]
//                          [--connections 32] [--top 30] [--accounts 1] [--floor] [--limit] [--free-ledger]
//
// --floor profiles the floor proxy instead, for comparison; --limit the limit gateway (bench/lib/targets.mjs). --free-ledger profiles the gateway with its
// ledger answering at once (bench/lib/free-ledger.mjs): what the rest of the request path costs.
// The .cpuprofile is kept under bench/results/
// (open it in Chrome DevTools or VS Code for the call tree).
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { summarizeProfile } from './lib/cpuprofile.mjs';
import { loadGenerator, runLoad } from './lib/load.mjs';
import { corePlan } from './lib/processes.mjs';
import { FREE_LEDGER_NODE_ARGS, prepareDatabase, startFloor, startGatewayProcess, startLimitGateway, startUpstream } from './lib/targets.mjs';
import { fixedSizePrompt, requestBody } from './lib/workload.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MODEL = 'svc-fast';
const { values: opts } = parseArgs({
  options: {
    store: { type: 'string', default: 'sqlite' },
    modes: { type: 'string', default: 'nonstream,stream' },
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '32' },
    top: { type: 'string', default: '30' },
    upstream: { type: 'string', default: 'replay' },
    accounts: { type: 'string', default: '1' },
    'max-tokens': { type: 'string', default: '16' },
    'prompt-bytes': { type: 'string', default: '1024' },
    floor: { type: 'boolean', default: false },
    limit: { type: 'boolean', default: false },
    'free-ledger': { type: 'boolean', default: false },
  },
});

async function main() {
  const plan = corePlan();
  const generator = loadGenerator();
  for (const note of [plan.note, generator.note]) if (note) console.log(`NOTE: ${note}`);
  const profDir = mkdtempSync(join(tmpdir(), 'svc-prof-'));
  const nodeArgs = ['--cpu-prof', '--cpu-prof-dir', profDir];
  const upstream = await startUpstream(plan, opts.upstream);
  let db = null;
  try {
    const maxTokens = Number(opts['max-tokens']);
    const { prompt } = await fixedSizePrompt(upstream.port, { model: MODEL, promptBytes: Number(opts['prompt-bytes']), maxTokens });
    let target;
    let auth = null;
    if (opts.floor) {
      target = await startFloor(plan, upstream.port, nodeArgs);
    } else if (opts.limit) {
      target = await startLimitGateway(plan, upstream.port, { model: MODEL, nodeArgs });
      auth = [target.key];
    } else {
      db = await prepareDatabase(opts.store, { upstreamPort: upstream.port, model: MODEL, accounts: Number(opts.accounts) });
      target = await startGatewayProcess(plan, db, [...nodeArgs, ...(opts['free-ledger'] ? FREE_LEDGER_NODE_ARGS : [])]);
      auth = db.secrets;
    }
    const url = `http://127.0.0.1:${target.port}/v1/chat/completions`;
    let requests = 0;
    try {
      if (db?.kind === 'postgres' && plan.pinned) {
        // As in bench/overhead.mjs: open the pool's connections, then move their server backends to the load core.
        const body = requestBody({ model: MODEL, prompt, maxTokens, stream: false });
        requests += (await runLoad({ generator, plan, url, body, auth, connections: Number(opts.connections), seconds: 2 })).requests;
        await db.pinBackends(plan.load);
      }
      for (const mode of opts.modes.split(',')) {
        const body = requestBody({ model: MODEL, prompt, maxTokens, stream: mode === 'stream' });
        const r = await runLoad({ generator, plan, url, body, auth, connections: Number(opts.connections), seconds: Number(opts.seconds) });
        if (r.failed > 0) throw new Error(`${mode}: ${JSON.stringify(r.errors)} failures\n${target.stderrTail()}`);
        requests += r.requests;
        console.log(`${mode} @${opts.connections}: ${r.rps.toFixed(0)} req/s, p50 ${r.p50Ms.toFixed(3)} ms (profiler on: slower than unprofiled)`);
      }
    } finally {
      // A clean exit (SIGTERM -> close -> exit) is what makes V8 write the profile.
      await target.stop('SIGTERM', 30_000);
    }
    const file = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
    if (!file) throw new Error(`no .cpuprofile written in ${profDir}`);
    const outDir = join(ROOT, 'bench/results');
    mkdirSync(outDir, { recursive: true });
    const kept = join(outDir, `${opts.floor ? 'floor' : opts.limit ? 'limit' : `gateway-${opts.store}`}-${new Date().toISOString().replace(/[:.]/g, '-')}.cpuprofile`);
    copyFileSync(join(profDir, file), kept);

    const s = summarizeProfile(kept, ROOT);
    const top = Number(opts.top);
    console.log(`\nprofile: ${kept}`);
    console.log(`busy ${s.busyMs.toFixed(0)} ms of ${s.totalMs.toFixed(0)} ms sampled; ${requests} requests -> ${((s.busyMs * 1000) / requests).toFixed(0)} us busy per request\n`);
    console.log('top functions by self time:');
    console.log(`${'self ms'.padStart(9)} ${'%busy'.padStart(6)}  function  location`);
    for (const f of s.functions.slice(0, top)) {
      console.log(`${f.selfMs.toFixed(1).padStart(9)} ${f.percentOfBusy.toFixed(1).padStart(6)}  ${f.function}  ${f.location}`);
    }
    console.log('\nthe project\'s own functions by inclusive time (with what they call):');
    for (const f of s.ownInclusive.slice(0, top)) {
      console.log(`${f.inclusiveMs.toFixed(1).padStart(9)} ${f.percentOfBusy.toFixed(1).padStart(6)}  ${f.function}`);
    }
    console.log('\nself time by file or package:');
    for (const o of s.origins.slice(0, top)) {
      console.log(`${o.selfMs.toFixed(1).padStart(9)} ${o.percentOfBusy.toFixed(1).padStart(6)}  ${o.origin}`);
    }
  } finally {
    await upstream.stop();
    if (db) await db.cleanup();
    rmSync(profDir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
