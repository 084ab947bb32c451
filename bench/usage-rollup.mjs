#!/usr/bin/env node
// GET /v1/usage with volume: loads 1,000,000 usage events (and their holds and daily rollup rows, as
// settlements would have written them) for one account over 365 days, then times the 90-day rollup
// through the Store and through HTTP. Run: npm run build && node bench/usage-rollup.mjs [sqlite|postgres] [events]
// PostgreSQL: SVC_BENCH_PG_URL (default postgres://postgres@127.0.0.1:5432/test), in a fresh schema.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { systemClock } from '../dist/core/clock.js';
import { silentLogger } from '../dist/core/logger.js';
import { parseConfig, DEFAULT_CONFIG } from '../dist/config/schema.js';
import { createApiKey } from '../dist/keys/key-service.js';
import { openStore } from '../dist/runtime/node/open-store.js';
import { startGateway } from '../dist/runtime/node/server.js';

const kind = process.argv[2] ?? 'sqlite';
const EVENTS = Number(process.argv[3] ?? 1_000_000);
const DAYS = 365;
const DAY_MS = 86_400_000;
const today = Date.parse(new Date().toISOString().slice(0, 10));
const firstDay = today - (DAYS - 1) * DAY_MS;

// Both dialects understand this SQL once `series(n)` exists: rows n = 0 .. EVENTS-1, spread over days and models.
const fill = (series, dayExpr) => [
  `INSERT INTO holds (id, account_id, environment, key_id, day, amount, status, settled_amount, lease_expires_at, created_at, finalized_at)
   SELECT 'bench_' || CAST(n AS TEXT), $ACCOUNT, 'live', $KEY, ${dayExpr}, 10, 'settled', 7, 0, 0, 0 FROM ${series}`,
  `INSERT INTO usage_events (account_id, environment, key_id, hold_id, request_id, model, routed_model, routed_provider,
                             prompt_tokens, completion_tokens, credits, outcome, latency_ms, day, created_at)
   SELECT $ACCOUNT, 'live', $KEY, 'bench_' || CAST(n AS TEXT), 'req', CASE n % 4 WHEN 0 THEN 'svc-auto' WHEN 1 THEN 'svc-fast' WHEN 2 THEN 'svc-code' ELSE 'svc-smart' END,
          'sandbox/m', 'sandbox', 100, 200, 7, 'completed', 5, ${dayExpr}, 0 FROM ${series}`,
  `INSERT INTO usage_daily (account_id, environment, day, model, requests, prompt_tokens, completion_tokens, credits)
   SELECT account_id, environment, day, model, COUNT(*), SUM(prompt_tokens), SUM(completion_tokens), SUM(credits)
   FROM usage_events WHERE account_id = $ACCOUNT GROUP BY account_id, environment, day, model`,
];

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function time(label, n, fn) {
  for (let i = 0; i < 20; i++) await fn(); // warm-up
  const samples = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    samples.push(performance.now() - t);
  }
  samples.sort((a, b) => a - b);
  console.log(`${label}: p50 ${percentile(samples, 50).toFixed(3)} ms, p99 ${percentile(samples, 99).toFixed(3)} ms (${n} runs)`);
}

async function main() {
  let url;
  let cleanup = async () => {};
  let raw;
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'svc-bench-'));
    url = `sqlite:${join(dir, 'bench.db')}`;
    cleanup = async () => rmSync(dir, { recursive: true, force: true });
    const { default: Database } = await import('libsql');
    raw = async (statements, params) => {
      const db = new Database(join(dir, 'bench.db'));
      db.exec('BEGIN');
      for (const s of statements) {
        db.prepare(
          `WITH RECURSIVE series(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM series WHERE n + 1 < ${EVENTS}) ${s.replaceAll('$ACCOUNT', `'${params.account}'`).replaceAll('$KEY', `'${params.key}'`)}`,
        ).run();
      }
      db.exec('COMMIT');
      db.close();
    };
  } else {
    const base = process.env.SVC_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
    const schema = `svc_bench_${Date.now()}`;
    const { default: postgres } = await import('postgres');
    const admin = postgres(base, { max: 1, onnotice: () => {} });
    await admin.unsafe(`CREATE SCHEMA ${schema}`);
    url = `${base}?schema=${schema}`;
    cleanup = async () => {
      await admin.unsafe(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    };
    raw = async (statements, params) => {
      const pg = postgres(base, { max: 1, onnotice: () => {}, connection: { search_path: schema } });
      await pg.begin(async (tx) => {
        for (const s of statements) {
          await tx.unsafe(s.replaceAll('$ACCOUNT', `'${params.account}'`).replaceAll('$KEY', `'${params.key}'`));
        }
      });
      await pg.end();
    };
  }

  const store = await openStore(url, systemClock);
  const account = await store.keys.createAccount({ id: `acct_bench_${Date.now()}`, name: 'bench' });
  const { record, secret } = await createApiKey(store.keys, { accountId: account.id, environment: 'live', name: null, dailyCreditLimit: null });
  await store.close();

  const started = performance.now();
  const dayExprSqlite = `strftime('%Y-%m-%d', (${firstDay} + (n % ${DAYS}) * ${DAY_MS}) / 1000, 'unixepoch')`;
  const dayExprPg = `to_char(to_timestamp((${firstDay} + (n % ${DAYS})::bigint * ${DAY_MS}) / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD')`;
  await raw(
    kind === 'sqlite' ? fill('series', dayExprSqlite) : fill(`generate_series(0, ${EVENTS - 1}) AS n`, dayExprPg),
    { account: account.id, key: record.id },
  );
  console.log(`${kind}: loaded ${EVENTS.toLocaleString()} usage events over ${DAYS} days in ${((performance.now() - started) / 1000).toFixed(1)} s`);

  const gw = await startGateway({
    config: parseConfig(DEFAULT_CONFIG),
    secrets: {},
    databaseUrl: url,
    port: 0,
    logger: silentLogger,
  });
  const start = new Date(today - 89 * DAY_MS).toISOString().slice(0, 10);
  const end = new Date(today).toISOString().slice(0, 10);
  const body = await (await fetch(`${gw.url}/usage?start_date=${start}&end_date=${end}`, { headers: { authorization: `Bearer ${secret}` } })).json();
  console.log(`90-day report: ${body.total_requests} requests, ${body.total_credits} credits, ${Object.keys(body.breakdown_by_model).length} models, ${body.breakdown_by_day.length} days`);
  await time(`${kind} Store.usage.rollup (90 days)`, 500, () =>
    gw.store.usage.rollup({ accountId: account.id, environment: 'live', startDay: start, endDay: end, model: null }),
  );
  await time(`${kind} GET /v1/usage over HTTP (90 days)`, 500, async () => {
    const r = await fetch(`${gw.url}/usage?start_date=${start}&end_date=${end}`, { headers: { authorization: `Bearer ${secret}` } });
    await r.arrayBuffer();
  });
  await gw.close();
  await cleanup();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
