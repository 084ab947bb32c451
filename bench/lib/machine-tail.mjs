// The machine's own tail, for a latency quantile to be read against: a plain loop that allocates nothing and
// branches the same way every time (a hash over a fixed 4 KB string), sized to take as long at the median
// as the code under test, timed call by call alternately with it, so both meet the same moments of the
// machine. On a quiet core the loop's p99 is within a few percent of its p50; on a shared virtual machine
// (steal, interrupts, a neighbour's cache) it is not, and no code of that length can have a smaller tail
// there. The ratio of the code's p99 to the loop's is what the code adds to the machine's tail.
const TEXT = 'Our quarterly planning notes cover hiring, the office move and the budget. '.repeat(60).slice(0, 4096);

function hashPasses(passes) {
  let h = 0;
  for (let r = 0; r < passes; r++) for (let i = 0; i < TEXT.length; i++) h = (Math.imul(h, 31) + TEXT.charCodeAt(i)) | 0;
  return h;
}

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];

function medianUs(fn, calls) {
  const s = new Float64Array(calls);
  for (let i = 0; i < calls; i++) {
    const t = process.hrtime.bigint();
    fn();
    s[i] = Number(process.hrtime.bigint() - t) / 1000;
  }
  s.sort();
  return quantile(s, 0.5);
}

/** A loop whose median takes about `targetUs` on this machine now: a fractional pass count, rounded up. */
export function calibratedLoop(targetUs) {
  let sink = 0;
  for (let i = 0; i < 2000; i++) sink += hashPasses(1);
  const onePass = medianUs(() => (sink += hashPasses(1)), 2000);
  const passes = Math.max(1, Math.round(targetUs / onePass));
  return { passes, run: () => hashPasses(passes), sink };
}

/**
 * Times `fn` and the calibrated loop alternately, `calls` each (after `warmup` of each): their quantiles in
 * microseconds, and the loop's passes. `fn` gets the call's index.
 */
export function timeAgainstMachine(fn, calls, warmup = 2000) {
  for (let i = 0; i < warmup; i++) fn(i);
  const probe = new Float64Array(2000);
  for (let i = 0; i < probe.length; i++) {
    const t = process.hrtime.bigint();
    fn(i);
    probe[i] = Number(process.hrtime.bigint() - t) / 1000;
  }
  probe.sort();
  const loop = calibratedLoop(quantile(probe, 0.5));
  for (let i = 0; i < warmup; i++) loop.run();
  const own = new Float64Array(calls);
  const base = new Float64Array(calls);
  let sink = 0;
  for (let i = 0; i < calls; i++) {
    let t = process.hrtime.bigint();
    fn(i);
    own[i] = Number(process.hrtime.bigint() - t) / 1000;
    t = process.hrtime.bigint();
    sink += loop.run();
    base[i] = Number(process.hrtime.bigint() - t) / 1000;
  }
  own.sort();
  base.sort();
  const q = (s) => ({ p50: quantile(s, 0.5), p90: quantile(s, 0.9), p99: quantile(s, 0.99), p999: quantile(s, 0.999), max: s[s.length - 1] });
  return { own: q(own), machine: q(base), passes: loop.passes, sink: sink + loop.sink };
}
