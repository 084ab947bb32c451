#!/usr/bin/env node
// The SQLite ledger's CPU a request of this build against another revision's, in one process: both stores
// open side by side (each on its own file), and each runs a batch of request-worths of store work (find the
// key, reserve, settle with its usage event, `--concurrency` in flight on one account) in turn, in a new
// random order each round; the figure is the median of the per-round ratios, which this machine's drift
// between minutes does not blur (bench/interleaved.mjs does the same for the whole gateway).
//
//   npm run build && taskset -c 0 node bench/store-interleaved.mjs --other REV [--concurrency 32]
//                                    [--rounds 12] [--batch 3000] [--capped]
//
// --capped gives the key a daily cap (the reserve then checks the day's counter too).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildRevision } from './lib/revision.mjs';

const { values: opts } = parseArgs({
  options: {
    other: { type: 'string' },
    concurrency: { type: 'string', default: '32' },
    rounds: { type: 'string', default: '12' },
    batch: { type: 'string', default: '3000' },
    capped: { type: 'boolean', default: false },
  },
});
if (!opts.other) throw new Error('--other REV is required');
const CONCURRENCY = Number(opts.concurrency);
const BATCH = Number(opts.batch);
const clock = { now: () => Date.now() };
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function target(name, dist, dir) {
  const { openStore } = await import(join(dist, 'runtime/node/open-store.js'));
  const { newTimeOrderedId } = await import(join(dist, 'core/ids.js'));
  const store = await openStore(join(dir, `${name.replace(/\W/g, '_')}.db`), clock);
  await store.keys.createAccount({ id: 'acct_bench', name: null });
  await store.keys.insertKey({ id: 'key_bench', accountId: 'acct_bench', environment: 'live', name: null, salt: 's', secretHash: 'h', redacted: 'r', dailyCreditLimit: opts.capped ? 1e15 : null });
  await store.ledger.grant({ accountId: 'acct_bench', environment: 'live', kind: 'purchased', amount: 1e15, expiresAt: null, idempotencyKey: null });
  const one = async () => {
    const holdId = newTimeOrderedId('hold_');
    await store.keys.findKey('key_bench');
    const r = await store.ledger.reserve({ holdId, keyId: 'key_bench', amount: 50, leaseMs: 60_000 });
    if (!r.ok) throw new Error(`reserve refused: ${r.reason}`);
    const usage = { requestId: holdId, model: 'svc-fast', routedModel: 'bench/m', routedProvider: 'bench', promptTokens: 300, completionTokens: 16, outcome: 'completed', latencyMs: 1, shortfallCredits: 0 };
    const s = await store.ledger.settle({ holdId, amount: 20, usage });
    if (s.status !== 'settled' || s.charged !== 20) throw new Error(`settle: ${JSON.stringify(s)}`);
  };
  const run = async (total) => {
    let started = 0;
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      while (started++ < total) await one();
    }));
  };
  return { name, store, run, cpu: [], ratio: [] };
}

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const other = buildRevision(opts.other);
const dir = mkdtempSync(join(tmpdir(), 'svc-store-interleaved-'));
try {
  const targets = [await target('this build', join(ROOT, 'dist'), dir), await target(`@${opts.other}`, other.dist, dir)];
  for (const t of targets) await t.run(BATCH);
  for (let round = 0; round < Number(opts.rounds); round++) {
    for (const t of [...targets].sort(() => Math.random() - 0.5)) {
      const before = process.cpuUsage();
      await t.run(BATCH);
      const used = process.cpuUsage(before);
      t.last = (used.user + used.system) / BATCH;
      t.cpu.push(t.last);
    }
    targets[1].ratio.push(targets[1].last / targets[0].last);
  }
  console.log(`store work a request (find key, reserve, settle + usage), ${CONCURRENCY} in flight, ${opts.rounds} rounds of ${BATCH}, ${process.version}`);
  for (const t of targets) console.log(`  ${t.name.padEnd(14)} ${median(t.cpu).toFixed(1).padStart(7)} us CPU a request (median of the rounds)`);
  const r = targets[1].ratio;
  console.log(`  @${opts.other} / this build: median ${median(r).toFixed(3)} (${Math.min(...r).toFixed(3)} to ${Math.max(...r).toFixed(3)})`);
  for (const t of targets) await t.store.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
  other.cleanup();
}
