// Allocation per request, by allocating function: preloaded into the gateway process (`node --import`), it
// samples V8's heap allocations, collected objects included, from 4 s after start for 5 s (the measured
// window of a bench point with `--warmup 2 --seconds 8`), divides by the HTTP requests served meanwhile and
// writes the top sites to bench/results/heap-<pid>.txt:
//
//   node bench/overhead.mjs --seconds 8 --warmup 2 --stores sqlite --connections 32 --modes nonstream \
//     --no-limit "--gateway-node-args=--import ./bench/lib/heap-sampling.mjs"
//
// The figures of docs/performance.md ("allocation per request") come from it. Sampling every 4 KB keeps its
// own cost small; the throughput of that run is not a figure to quote.
import { Session } from 'node:inspector';
import { mkdirSync, writeFileSync } from 'node:fs';
import { servedRequests } from './served-requests.mjs';

const START_MS = Number(process.env.SVC_HEAP_START_MS ?? 4000);
const WINDOW_MS = Number(process.env.SVC_HEAP_WINDOW_MS ?? 5000);
/**
 * SVC_HEAP_SURVIVORS=1 leaves out what a scavenge collected: what is left was alive at a scavenge, most of
 * it promoted to the old generation, which is what makes scavenges and then mark-compacts cost.
 */
const SURVIVORS = process.env.SVC_HEAP_SURVIVORS === '1';
const out = new URL(`../results/heap-${SURVIVORS ? 'survivors-' : ''}${process.pid}.txt`, import.meta.url);

const session = new Session();
session.connect();
setTimeout(() => {
  session.post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: !SURVIVORS });
  const before = servedRequests();
  setTimeout(() => {
    session.post('HeapProfiler.stopSampling', (err, result) => {
      if (err) throw err;
      const n = Math.max(1, servedRequests() - before);
      const bySite = new Map();
      const walk = (node) => {
        const f = node.callFrame;
        const site = `${f.functionName || '(anonymous)'} ${f.url.split('/').slice(-2).join('/')}:${f.lineNumber}`;
        if (node.selfSize) bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize);
        for (const child of node.children) walk(child);
      };
      walk(result.profile.head);
      let total = 0;
      for (const bytes of bySite.values()) total += bytes;
      const top = [...bySite].sort((a, b) => b[1] - a[1]).slice(0, 40);
      mkdirSync(new URL('.', out), { recursive: true });
      writeFileSync(
        out,
        `requests ${n}, ${(total / n / 1024).toFixed(1)} KB ${SURVIVORS ? 'that survived a scavenge' : 'allocated'} per request\n` +
          top.map(([site, bytes]) => `${(bytes / n / 1024).toFixed(2).padStart(8)} KB/req  ${site}`).join('\n') +
          '\n',
      );
    });
  }, WINDOW_MS).unref();
}, START_MS).unref();
