#!/usr/bin/env node
// CPU per request of several targets measured in short interleaved windows, for comparisons this machine's
// drift cannot blur. On this VM the same build's CPU per request moved by 50% between runs minutes apart
// (docs/performance.md, "Twelfth session"), more than the changes looked for; sequential runs, one target
// after another, compare one moment of the machine with another. Here every target runs under load for a
// window of a couple of seconds in turn, in a new random order each round, for many rounds: each round's
// ratio compares targets a few seconds apart, and the median over rounds is the figure.
//
//   node bench/interleaved.mjs [--other REV] [--modes nonstream,stream] [--connections 32] [--rounds 12]
//                              [--window 2] [--no-limit] [--variant-env NAME=VALUE ...]
//
// --variant-env adds a second gateway from this checkout, started with those environment variables set
// (repeat the option for several): what a setting costs, e.g. --variant-env SVC_LOG_LEVEL=warn for the
// access log.
//
// Targets: the limit gateway (../shared/bench/limit-gateway.mjs), this checkout's gateway (dist/, built by
// `npm run build`), and with --other a second gateway built from REV in a scratch worktree (like
// bench/ab-revision.sh). All pinned to core 0, the load generator and the upstream on core 1, each gateway
// on its own SQLite file. Prints per target: CPU per request (the sum of the windows' CPU over the sum of
// their requests), requests per second, and the median (and range) of the per-round ratios.
import { parseArgs } from 'node:util';
import { loadGenerator, runLoad } from './lib/load.mjs';
import { corePlan } from './lib/processes.mjs';
import { buildRevision } from './lib/revision.mjs';
import { prepareDatabase, startGatewayProcess, startLimitGateway, startUpstream } from './lib/targets.mjs';
import { fixedSizePrompt, requestBody } from './lib/workload.mjs';

const MODEL = 'svc-fast';
const { values: opts } = parseArgs({
  options: {
    other: { type: 'string' },
    modes: { type: 'string', default: 'nonstream' },
    connections: { type: 'string', default: '32' },
    rounds: { type: 'string', default: '12' },
    window: { type: 'string', default: '2' },
    'no-limit': { type: 'boolean', default: false },
    'variant-env': { type: 'string', multiple: true, default: [] },
    'max-tokens': { type: 'string', default: '16' },
    'prompt-bytes': { type: 'string', default: '1024' },
  },
});

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function main() {
  const plan = corePlan();
  const generator = loadGenerator();
  for (const note of [plan.note, generator.note]) if (note) console.log(`NOTE: ${note}`);
  const connections = Number(opts.connections);
  const rounds = Number(opts.rounds);
  const window = Number(opts.window);
  const maxTokens = Number(opts['max-tokens']);
  const cleanups = [];
  try {
    const other = opts.other ? buildRevision(opts.other) : null;
    if (other) cleanups.push(() => other.cleanup());
    const upstream = await startUpstream(plan, 'replay');
    cleanups.push(() => upstream.stop());
    const { prompt } = await fixedSizePrompt(upstream.port, { model: MODEL, promptBytes: Number(opts['prompt-bytes']), maxTokens });
    const targets = [];
    if (!opts['no-limit']) {
      const limit = await startLimitGateway(plan, upstream.port, { model: MODEL });
      cleanups.push(() => limit.cleanup(), () => limit.stop());
      targets.push({ name: 'limit', proc: limit, auth: limit.key });
    }
    const variantEnv = Object.fromEntries(
      opts['variant-env'].map((kv) => {
        const at = kv.indexOf('=');
        if (at < 1) throw new Error(`--variant-env takes NAME=VALUE, got '${kv}'`);
        return [kv.slice(0, at), kv.slice(at + 1)];
      }),
    );
    const gateways = [
      { name: 'gateway', cli: undefined, env: {} },
      ...(other ? [{ name: `gateway@${opts.other}`, cli: other.cli, env: {} }] : []),
      ...(opts['variant-env'].length > 0 ? [{ name: 'gateway+env', cli: undefined, env: variantEnv }] : []),
    ];
    for (const g of gateways) {
      const db = await prepareDatabase('sqlite', { upstreamPort: upstream.port, model: MODEL, cliPath: g.cli });
      cleanups.push(() => db.cleanup());
      const proc = await startGatewayProcess(plan, { ...db, env: { ...db.env, ...g.env } }, [], g.cli);
      cleanups.push(() => proc.stop());
      targets.push({ name: g.name, proc, auth: db.secrets });
    }
    for (const mode of opts.modes.split(',')) {
      const body = requestBody({ model: MODEL, prompt, maxTokens, stream: mode === 'stream' });
      const run = (t, seconds) =>
        runLoad({ generator, plan, url: `http://127.0.0.1:${t.proc.port}/v1/chat/completions`, body, auth: t.auth, connections, seconds });
      for (const t of targets) await run(t, 2); // warm-up: JIT, caches, the databases' first pages
      const totals = new Map(targets.map((t) => [t.name, { cpu: 0, requests: 0, seconds: 0, failed: 0, perRound: [] }]));
      for (let r = 0; r < rounds; r++) {
        const order = [...targets].sort(() => Math.random() - 0.5);
        for (const t of order) {
          const cpu0 = t.proc.cpuSeconds();
          const res = await run(t, window);
          const cpu = t.proc.cpuSeconds() - cpu0;
          const tot = totals.get(t.name);
          tot.cpu += cpu;
          tot.requests += res.requests;
          tot.seconds += res.seconds;
          tot.failed += res.failed;
          tot.perRound[r] = (cpu * 1e6) / res.requests;
        }
      }
      console.log(`\n${mode}@${connections}, ${rounds} rounds of ${window} s windows:`);
      const base = totals.get(targets[0].name);
      for (const t of targets) {
        const tot = totals.get(t.name);
        const usPerReq = (tot.cpu * 1e6) / tot.requests;
        const ratios = tot.perRound.map((v, i) => v / base.perRound[i]);
        const rs = [...ratios].sort((a, b) => a - b);
        console.log(
          `  ${t.name.padEnd(22)} ${usPerReq.toFixed(0).padStart(5)} us/req  ${(tot.requests / tot.seconds).toFixed(0).padStart(6)} req/s` +
            `  per-round us/req median ${median(tot.perRound).toFixed(0)} (${Math.min(...tot.perRound).toFixed(0)}-${Math.max(...tot.perRound).toFixed(0)})` +
            (t === targets[0] ? '' : `  x${targets[0].name} median ${median(ratios).toFixed(3)} (${rs[0].toFixed(3)}-${rs.at(-1).toFixed(3)})`) +
            (tot.failed > 0 ? `  FAILED ${tot.failed}` : ''),
        );
      }
      if (targets.length > 2) {
        const [, a, b] = targets;
        const ta = totals.get(a.name);
        const tb = totals.get(b.name);
        const ratios = tb.perRound.map((v, i) => v / ta.perRound[i]);
        console.log(`  ${b.name} / ${a.name}: median ${median(ratios).toFixed(3)} (${Math.min(...ratios).toFixed(3)}-${Math.max(...ratios).toFixed(3)}) over ${rounds} rounds`);
      }
    }
  } finally {
    for (const c of cleanups.reverse()) await Promise.resolve(c()).catch((e) => console.error(String(e)));
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
