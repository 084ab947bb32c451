// Promises per request, by creating site: preloaded into the gateway process (`node --import`), it counts
// every promise V8 creates (node:v8 promiseHooks) from 4 s after start for 5 s, divides by the HTTP
// requests served meanwhile, and writes the total and the sites of a random 1-in-SAMPLE sample of them
// (four frames each; random, not every SAMPLE-th, which aliases with the gateway's periodic turns) to bench/results/promises-<pid>.txt:
//
//   node bench/overhead.mjs --seconds 8 --warmup 2 --stores sqlite --connections 32 --modes nonstream \
//     --no-limit "--gateway-node-args=--import ./bench/lib/promise-count.mjs"
//
// Like allocation (./heap-sampling.mjs), the count does not move with the machine's noise, so a change
// that removes a layer of promises shows in it when the CPU figures cannot resolve it: every promise is an
// allocation, a microtask and often a closure. The sites' stacks cost time, so the throughput of that run
// is not a figure to quote. The limit gateway can be counted the same way (`--import` in its command).
import { mkdirSync, writeFileSync } from 'node:fs';
import { servedRequests } from './served-requests.mjs';
import { promiseHooks } from 'node:v8';

const START_MS = Number(process.env.SVC_PROMISE_START_MS ?? 4000);
const WINDOW_MS = Number(process.env.SVC_PROMISE_WINDOW_MS ?? 5000);
const SAMPLE = 64;
const FRAMES = 4;
const out = new URL(`../results/promises-${process.pid}.txt`, import.meta.url);

/** The frames above the hook, shortened: our files by their path under the project, packages by name. */
function site() {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = FRAMES + 3;
  const stack = new Error().stack ?? '';
  Error.stackTraceLimit = limit;
  return stack
    .split('\n')
    .slice(1)
    .filter((line) => !line.includes('promise-count.mjs'))
    .slice(0, FRAMES)
    .map((line) =>
      line
        .trim()
        .replace(/^at /, '')
        .replace(/file:\/\/\S*\/node_modules\//, '')
        .replace(/file:\/\/\S*\/(dist|bench)\//, '$1/'),
    )
    .join(' < ');
}

setTimeout(() => {
  let created = 0;
  const sites = new Map();
  const before = servedRequests();
  const stop = promiseHooks.onInit(() => {
    created++;
    if (Math.random() * SAMPLE >= 1) return;
    const where = site();
    sites.set(where, (sites.get(where) ?? 0) + 1);
  });
  setTimeout(() => {
    stop();
    const n = Math.max(1, servedRequests() - before);
    const top = [...sites].sort((a, b) => b[1] - a[1]).slice(0, 60);
    mkdirSync(new URL('.', out), { recursive: true });
    writeFileSync(
      out,
      `requests ${n}, ${(created / n).toFixed(1)} promises created per request\n` +
        top.map(([where, count]) => `${((count * SAMPLE) / n).toFixed(2).padStart(7)}/req  ${where}`).join('\n') +
        '\n',
    );
  }, WINDOW_MS).unref();
}, START_MS).unref();
