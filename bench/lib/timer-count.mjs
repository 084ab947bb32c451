// A preload (`node --import`) that counts, in the process it is loaded into, the runtime timers set and
// cleared, the AbortControllers made and the setImmediate calls, and appends the counts as one JSON line to
// $SVC_TIMER_COUNTS (default /tmp/svc-timer-counts.txt) at exit. Divided by the requests a bench run served,
// they are the per-request figures of docs/performance.md ("Seventh session"):
//
//   node bench/overhead.mjs --seconds 3 --warmup 1 --stores sqlite --connections 32 --modes nonstream --no-limit \
//     --gateway-node-args="--import $PWD/bench/lib/timer-count.mjs"
import { appendFileSync } from 'node:fs';

const OUT = process.env.SVC_TIMER_COUNTS ?? '/tmp/svc-timer-counts.txt';
const counts = { setTimeout: 0, clearTimeout: 0, setImmediate: 0, AbortController: 0 };

const { setTimeout: set, clearTimeout: clear, setImmediate: immediate, AbortController: Controller } = globalThis;
globalThis.setTimeout = function (...args) {
  counts.setTimeout += 1;
  return set.apply(this, args);
};
globalThis.clearTimeout = function (...args) {
  counts.clearTimeout += 1;
  return clear.apply(this, args);
};
globalThis.setImmediate = function (...args) {
  counts.setImmediate += 1;
  return immediate.apply(this, args);
};
globalThis.AbortController = class extends Controller {
  constructor() {
    super();
    counts.AbortController += 1;
  }
};
process.on('exit', () => appendFileSync(OUT, `${JSON.stringify({ pid: process.pid, ...counts })}\n`));
