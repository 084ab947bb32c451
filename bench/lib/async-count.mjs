// A preload (`node --import`) that counts the async resources the process it is loaded into creates, by
// type (PROMISE, Timeout, TickObject, UNDICI_REQUEST, ...), and appends them as one JSON line to
// $SVC_ASYNC_COUNTS (default /tmp/svc-async-counts.txt) at exit. Divided by the upstream calls of the run
// (UNDICI_REQUEST: one per request in the bench), the promises are the per-request figure of
// docs/performance.md ("Eighth session"). The hook slows the process down: read the counts, not the timings.
//
//   node bench/overhead.mjs --seconds 3 --warmup 1 --stores sqlite --connections 32 --modes nonstream --no-limit \
//     --gateway-node-args="--import $PWD/bench/lib/async-count.mjs"
import { createHook } from 'node:async_hooks';
import { appendFileSync } from 'node:fs';

const OUT = process.env.SVC_ASYNC_COUNTS ?? '/tmp/svc-async-counts.txt';
const counts = {};
createHook({
  init(_id, type) {
    counts[type] = (counts[type] ?? 0) + 1;
  },
}).enable();
process.on('exit', () => {
  const calls = counts.UNDICI_REQUEST ?? 0;
  const perCall = calls > 0 ? { promisesPerUpstreamCall: Math.round((counts.PROMISE ?? 0) / calls) } : {};
  appendFileSync(OUT, `${JSON.stringify({ pid: process.pid, ...perCall, ...counts })}\n`);
});
