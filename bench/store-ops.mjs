#!/usr/bin/env node
// The ledger alone, without HTTP: wall time and this process's CPU per request-worth of store work (find
// the key, reserve, settle with its usage event), on SQLite and PostgreSQL, with 1 and 32 requests in
// flight on one account (the worst case for row locks). Run it pinned to one core for stable figures:
//
//   npm run build && taskset -c 0 node bench/store-ops.mjs [--requests 5000] [--stores sqlite,postgres]
//                                                          [--concurrency 1,32] [--grow 0]
//                                                          [--hold-ids time|random] [--limit]
//
// Hold ids are made as the gateway makes them (time-ordered, src/core/ids.ts), or purely random with
// --hold-ids random (what the gateway did before). --grow N first runs N requests (32 in flight, not
// measured), so the figures are those of a ledger that already holds N holds, usage events and journal rows.
//
// The PostgreSQL store gets a fresh schema, dropped afterwards; SQLite a temporary file. On PostgreSQL the
// database server's CPU per request is reported too (every `postgres` process of this machine, from /proc:
// run nothing else against the server meanwhile), and --limit adds the limit gateway's ledger on PostgreSQL
// (bench/lib/limit-ledger-postgres.mjs: the key read, one statement to reserve, one to settle) at the same
// concurrency, the work the product's store is compared with.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { newId, newTimeOrderedId } from '../dist/core/ids.js';
import { openStore } from '../dist/runtime/node/open-store.js';
import { openLimitLedger } from './lib/limit-ledger-postgres.mjs';
import { PG_URL } from './lib/targets.mjs';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '5000' },
    stores: { type: 'string', default: 'sqlite,postgres' },
    concurrency: { type: 'string', default: '1,32' },
    grow: { type: 'string', default: '0' },
    'hold-ids': { type: 'string', default: 'time' },
    limit: { type: 'boolean', default: false },
  },
});
if (!['time', 'random'].includes(values['hold-ids'])) throw new Error('--hold-ids must be time or random');
const newHoldId = values['hold-ids'] === 'time' ? () => newTimeOrderedId('hold_') : () => newId('hold_');
const GROW = Number(values.grow);
const REQUESTS = Number(values.requests);
const clock = { now: () => Date.now() };

async function withStore(kind, fn) {
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'svc-store-ops-'));
    const store = await openStore(join(dir, 'ledger.db'), clock);
    try {
      return await fn(store);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const schema = `svc_store_ops_${process.pid}`;
  const store = await openStore(`${PG_URL}?schema=${schema}`, clock);
  try {
    return await fn(store);
  } finally {
    await store.close();
    const admin = postgres(PG_URL, { max: 1, onnotice: () => undefined });
    await admin.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  }
}

/** CPU seconds used so far by every PostgreSQL server process on this machine (null where /proc is missing). */
function postgresCpuSeconds() {
  let ticks = 0;
  let dirs;
  try {
    dirs = readdirSync('/proc');
  } catch {
    return null;
  }
  for (const pid of dirs) {
    if (!/^\d+$/.test(pid)) continue;
    let stat;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // the process ended meanwhile
    }
    if (!stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')).startsWith('postgres')) continue;
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticks += Number(fields[11]) + Number(fields[12]); // utime, stime
  }
  return ticks / CLOCK_TICKS;
}
/** USER_HZ: /proc counts CPU time in these. */
const CLOCK_TICKS = 100;

async function measure(store, concurrency, requests = REQUESTS, one = productRequest(store)) {
  async function run(total) {
    let started = 0;
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (started++ < total) await one();
    }));
  }
  await run(Math.min(1000, requests));
  const db0 = postgresCpuSeconds();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await run(requests);
  const cpu = process.cpuUsage(cpu0);
  const wallMs = performance.now() - t0;
  const db1 = postgresCpuSeconds();
  return {
    concurrency,
    requests,
    wall_us_per_request: (wallMs * 1000) / requests,
    cpu_us_per_request: (cpu.user + cpu.system) / requests,
    requests_per_s: (requests / wallMs) * 1000,
    db_cpu_us_per_request: db0 === null || db1 === null ? null : ((db1 - db0) * 1e6) / requests,
  };
}

function productRequest(store) {
  return async function one() {
    const id = newHoldId();
    await store.keys.findKey('key_bench');
    const r = await store.ledger.reserve({ holdId: id, keyId: 'key_bench', amount: 50, leaseMs: 60_000 });
    if (!r.ok) throw new Error(`reserve refused: ${r.reason}`);
    await store.ledger.settle({
      holdId: id,
      amount: 20,
      usage: { requestId: id, model: 'svc-fast', routedModel: 'bench/m', routedProvider: 'bench', promptTokens: 300, completionTokens: 16, outcome: 'completed', latencyMs: 1, shortfallCredits: 0 },
    });
  };
}

/** The limit gateway's ledger work for one request, as bench/servers/limit-gateway-postgres.mjs does it. */
function limitRequest(ledger, keyId) {
  return async function one() {
    const key = await ledger.findKey(keyId);
    const holdId = await ledger.reserve(key.account_id, keyId, 50);
    if (holdId === null) throw new Error('limit reserve refused');
    await ledger.settle({ id: holdId }, 20, { model: 'svc-fast', routed: 'bench/m', prompt: 300, completion: 16 });
  };
}

function report(kind, r) {
  const db = kind === 'sqlite' || r.db_cpu_us_per_request === null ? '' : `  ${r.db_cpu_us_per_request.toFixed(0).padStart(6)} us database CPU`;
  console.log(
    `  ${kind.padEnd(8)} ${String(r.concurrency).padStart(3)} in flight  ${r.wall_us_per_request.toFixed(0).padStart(6)} us wall  ` +
      `${r.cpu_us_per_request.toFixed(0).padStart(6)} us CPU  ${r.requests_per_s.toFixed(0).padStart(6)} req/s${db}`,
  );
}

console.log(`store work per request (find key, reserve, settle + usage), ${REQUESTS} requests per point, ${values['hold-ids']} hold ids, ${GROW} requests before, ${process.version}`);
for (const kind of values.stores.split(',')) {
  await withStore(kind, async (store) => {
    await store.keys.createAccount({ id: 'acct_bench', name: null });
    await store.keys.insertKey({ id: 'key_bench', accountId: 'acct_bench', environment: 'live', name: null, salt: 's', secretHash: 'h', redacted: 'r', dailyCreditLimit: null });
    await store.ledger.grant({ accountId: 'acct_bench', environment: 'live', kind: 'purchased', amount: 1e12, expiresAt: null, idempotencyKey: null });
    if (GROW > 0) await measure(store, 32, GROW);
    for (const c of values.concurrency.split(',').map(Number)) report(kind, await measure(store, c));
  });
  if (kind === 'postgres' && values.limit) {
    const schema = `svc_store_ops_limit_${process.pid}`;
    const ledger = await openLimitLedger(PG_URL, schema);
    try {
      const keyId = ledger.seededKey.slice('svc_live_'.length, 'svc_live_'.length + 12);
      for (const c of values.concurrency.split(',').map(Number)) report('limit', await measure(null, c, REQUESTS, limitRequest(ledger, keyId)));
    } finally {
      await ledger.end();
      const admin = postgres(PG_URL, { max: 1, onnotice: () => undefined });
      await admin.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    }
  }
}
