#!/usr/bin/env node
// What the web framework costs per request, apart from everything else the gateway does: CPU per request of
// one POST route (read a 1 KB JSON body, answer 0.5 KB of JSON) served by node:http alone and by Hono on
// @hono/node-server, bare and with one of the gateway's habits each (bench/servers/http-variants.mjs). The
// server is pinned to core 0, wrk to core 1; variants run in turn, --rounds times, and the median is kept.
//
//   node bench/http-framework.mjs [--seconds 5] [--connections 32] [--rounds 3] [--variants node-http,hono,...]
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadGenerator, runLoad } from './lib/load.mjs';
import { corePlan, cpuSeconds, readyJson, startProcess } from './lib/processes.mjs';
import { promptText, requestBody } from './lib/workload.mjs';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '32' },
    rounds: { type: 'string', default: '3' },
    variants: { type: 'string', default: 'node-http,hono,hono-header,hono-signal,hono-json,hono-after' },
  },
});
const SERVER = fileURLToPath(new URL('./servers/http-variants.mjs', import.meta.url));
const plan = corePlan();
if (plan.note) console.log(`note: ${plan.note}`);
const generator = loadGenerator();
if (generator.note) console.log(`note: ${generator.note}`);
const body = requestBody({ model: 'svc-fast', prompt: promptText(1024), maxTokens: 16, stream: false });
const variants = values.variants.split(',');
const results = new Map(variants.map((v) => [v, []]));

for (let round = 0; round < Number(values.rounds); round++) {
  for (const variant of variants) {
    const proc = await startProcess({ name: variant, plan, core: plan.underTest ?? null, command: process.execPath, args: [SERVER, variant], readyPort: readyJson });
    const url = `http://127.0.0.1:${proc.port}/v1/chat/completions`;
    const load = { generator, plan, url, body, auth: 'svc_live_bench', connections: Number(values.connections) };
    await runLoad({ ...load, seconds: 2 });
    const before = cpuSeconds(proc.pid);
    const run = await runLoad({ ...load, seconds: Number(values.seconds) });
    const cpu = (cpuSeconds(proc.pid) ?? NaN) - (before ?? NaN);
    results.get(variant)?.push({ usPerRequest: (cpu * 1e6) / run.requests, rps: run.rps, failed: run.failed });
    await proc.stop();
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const base = median((results.get('node-http') ?? []).map((r) => r.usPerRequest));
console.log(`CPU per request, median of ${values.rounds} (${values.connections} connections, ${values.seconds} s each):`);
for (const [variant, runs] of results) {
  const us = median(runs.map((r) => r.usPerRequest));
  const failed = runs.reduce((s, r) => s + r.failed, 0);
  console.log(
    `  ${variant.padEnd(12)} ${us.toFixed(1).padStart(7)} us  ${Math.round(median(runs.map((r) => r.rps))).toString().padStart(6)} req/s` +
      (Number.isFinite(base) ? `  +${(us - base).toFixed(1)} us over node:http` : '') +
      (failed > 0 ? `  (${failed} failed)` : ''),
  );
}
