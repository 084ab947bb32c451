// Garbage collection per request, by kind: preloaded into a process under load (`node --import`), it sums
// the GC pauses V8 reports (PerformanceObserver 'gc' entries) from 4 s after start for 5 s, divides by the
// HTTP requests served meanwhile and writes them with the new space's survivors to bench/results/gc-<pid>.txt:
//
//   node bench/overhead.mjs --seconds 8 --warmup 2 --stores sqlite --connections 32 --modes nonstream \
//     --no-limit "--gateway-node-args=--import ./bench/lib/gc-stats.mjs"
//
// A scavenge copies what is alive in the young generation, so its cost per request measures what the
// requests in flight hold, where allocation per request (./heap-sampling.mjs) measures what they make.
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';
import { mkdirSync, writeFileSync } from 'node:fs';
import { servedRequests } from './served-requests.mjs';

const START_MS = Number(process.env.SVC_GC_START_MS ?? 4000);
const WINDOW_MS = Number(process.env.SVC_GC_WINDOW_MS ?? 5000);
const out = new URL(`../results/gc-${process.pid}.txt`, import.meta.url);
const KINDS = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-compact',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental marking',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak callbacks',
};

let on = false;
const sums = new Map();
/** New space in use when a scavenge is reported: about what it kept (the survivors), plus what came since. */
let survivorBytes = 0;
let survivorSamples = 0;
new PerformanceObserver((list) => {
  if (!on) return;
  for (const e of list.getEntries()) {
    const kind = KINDS[e.detail?.kind ?? e.kind] ?? 'other';
    const s = sums.get(kind) ?? { count: 0, ms: 0 };
    s.count++;
    s.ms += e.duration;
    sums.set(kind, s);
    if (kind === 'scavenge') {
      const young = getHeapSpaceStatistics().find((x) => x.space_name === 'new_space');
      if (young) {
        survivorBytes += young.space_used_size;
        survivorSamples++;
      }
    }
  }
}).observe({ entryTypes: ['gc'] });

setTimeout(() => {
  on = true;
  const before = servedRequests();
  setTimeout(() => {
    on = false;
    const n = Math.max(1, servedRequests() - before);
    const lines = [...sums].map(([kind, s]) => `${kind.padEnd(20)} ${String(s.count).padStart(6)} pauses  ${((s.ms * 1000) / n).toFixed(1).padStart(7)} us/req  ${(s.ms / s.count).toFixed(2)} ms each`);
    mkdirSync(new URL('.', out), { recursive: true });
    const survivors = survivorSamples > 0 ? `new space in use after a scavenge: ${(survivorBytes / survivorSamples / 1024).toFixed(0)} KB on average\n` : '';
    writeFileSync(out, `${process.argv.slice(1).join(' ').slice(0, 120)}\nrequests ${n}\n${lines.join('\n')}\n${survivors}`);
  }, WINDOW_MS).unref();
}, START_MS).unref();
