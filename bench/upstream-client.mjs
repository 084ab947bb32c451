#!/usr/bin/env node
// CPU per upstream call of the gateway's two upstream clients, on the same loopback upstream in one run:
// the platform's fetch (what the adapters get on edge runtimes, and got on Node before) and the Node
// runtime's transport (undici's dispatch, the body read from its handler calls, src/runtime/node/upstream-client.ts).
// Each call is consumed the way the adapters consume it: res.text() for a JSON answer, the body's reader
// to the end for a stream. The client process is pinned to core 0, the upstream to core 1.
// Run: npm run build && node bench/upstream-client.mjs [--calls N] [--concurrency C]
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { corePlan, pinned, startProcess } from './lib/processes.mjs';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '8000' },
    concurrency: { type: 'string', default: '32' },
    child: { type: 'string' },
    port: { type: 'string' },
    stream: { type: 'boolean', default: false },
  },
});

if (values.child) {
  // One measurement in a fresh process, so neither client warms the other's code or pools.
  const { createNodeUpstreamClient } = await import('../dist/runtime/node/upstream-client.js');
  const url = `http://127.0.0.1:${values.port}/v1/chat/completions`;
  const stream = values.stream;
  const body = JSON.stringify({
    model: 'sandbox-fast',
    stream,
    messages: [{ role: 'user', content: 'Say hello to the bench in a few words, please.' }],
  });
  const headers = { 'content-type': 'application/json', accept: stream ? 'text/event-stream' : 'application/json' };
  const client = values.child === 'node-client' ? createNodeUpstreamClient() : null;
  async function one() {
    if (client !== null) {
      // What the adapters do with the Node transport's reply.
      const res = await client.http(url, { headers, body, signal: new AbortController().signal });
      if (!stream) return (await res.text()).length;
      const decoder = new TextDecoder();
      let n = 0;
      for await (const chunk of res.body) n += decoder.decode(chunk, { stream: true }).length;
      return n;
    }
    const res = await fetch(url, { method: 'POST', headers, body, signal: new AbortController().signal });
    if (!stream) return (await res.text()).length;
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let n = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return n;
      n += decoder.decode(value, { stream: true }).length;
    }
  }
  async function run(total, concurrency) {
    let i = 0;
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (i++ < total) await one();
    }));
  }
  const calls = Number(values.calls);
  const concurrency = Number(values.concurrency);
  await run(Math.max(1000, calls / 4), concurrency);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await run(calls, concurrency);
  const cpu = process.cpuUsage(cpu0);
  const wallMs = performance.now() - t0;
  process.stdout.write(JSON.stringify({ cpu_us_per_call: (cpu.user + cpu.system) / calls, calls_per_s: (calls / wallMs) * 1000 }) + '\n');
  await client?.close();
  process.exit(0);
}

const plan = corePlan();
if (plan.note) console.error(`note: ${plan.note}`);
const upstream = await startProcess({
  name: 'upstream',
  plan,
  core: plan.load ?? null,
  command: process.execPath,
  args: [fileURLToPath(new URL('./servers/upstream.mjs', import.meta.url))],
  readyPort: (line) => (line.startsWith('{') ? JSON.parse(line).port ?? null : null),
});
try {
  const self = fileURLToPath(import.meta.url);
  console.log(`upstream calls: ${values.calls} per client and mode, ${values.concurrency} at a time, ${process.version}`);
  for (const stream of [false, true]) {
    const rows = {};
    for (const client of ['fetch', 'node-client']) {
      const args = [self, '--child', client, '--port', String(upstream.port), '--calls', values.calls, '--concurrency', values.concurrency];
      if (stream) args.push('--stream');
      const cmd = pinned(plan, plan.underTest ?? null, process.execPath, args);
      const r = spawnSync(cmd.command, cmd.args, { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`${client} failed: ${r.stderr}`);
      rows[client] = JSON.parse(r.stdout.trim().split('\n').at(-1));
    }
    const mode = stream ? 'streaming    ' : 'non-streaming';
    for (const [client, r] of Object.entries(rows)) {
      console.log(`  ${mode} ${client.padEnd(12)} ${r.cpu_us_per_call.toFixed(0).padStart(5)} us CPU per call  ${r.calls_per_s.toFixed(0).padStart(6)} calls/s`);
    }
    console.log(`  ${mode} node-client / fetch CPU ratio ${(rows['node-client'].cpu_us_per_call / rows.fetch.cpu_us_per_call).toFixed(2)}`);
  }
} finally {
  await upstream.stop();
}
