// A preload (`node --import`) that times every libsql statement and exec of the process it is loaded into,
// and at exit appends, per SQL text, the calls, the total and the time per call to $SVC_STATEMENT_TIMES
// (default /tmp/svc-statement-times.txt), with the writes and COMMITs per second of run (how many ledger
// writes each group commit held). It adds two clock reads per call, so read it for the split, not the total.
//
//   node bench/overhead.mjs --seconds 5 --warmup 2 --stores sqlite --connections 32 --modes nonstream --no-limit \
//     --gateway-node-args="--import $PWD/bench/lib/statement-timing.mjs"
//   taskset -c 0 node --import ./bench/lib/statement-timing.mjs bench/store-ops.mjs --stores sqlite --concurrency 32
import { appendFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const Database = require('libsql');
const OUT = process.env.SVC_STATEMENT_TIMES ?? '/tmp/svc-statement-times.txt';

const stats = new Map();
const seconds = [];
function count(key, ns) {
  const s = stats.get(key);
  if (s === undefined) stats.set(key, { calls: 1, ns });
  else {
    s.calls += 1;
    s.ns += ns;
  }
}

const prepare = Database.prototype.prepare;
Database.prototype.prepare = function (sql) {
  const statement = prepare.call(this, sql);
  const key = sql.replace(/\s+/g, ' ').slice(0, 100);
  for (const method of ['run', 'get', 'all']) {
    const original = statement[method].bind(statement);
    statement[method] = (...args) => {
      const t = process.hrtime.bigint();
      try {
        return original(...args);
      } finally {
        count(key, Number(process.hrtime.bigint() - t));
      }
    };
  }
  return statement;
};

const exec = Database.prototype.exec;
Database.prototype.exec = function (sql) {
  const second = Math.floor(performance.now() / 1000);
  const s = (seconds[second] ??= { writes: 0, commits: 0 });
  if (sql === 'COMMIT') s.commits += 1;
  if (sql.startsWith('SAVEPOINT')) s.writes += 1;
  const t = process.hrtime.bigint();
  try {
    return exec.call(this, sql);
  } finally {
    count(`exec ${sql.replace(/\s+/g, ' ').slice(0, 60)}`, Number(process.hrtime.bigint() - t));
  }
};

process.on('exit', () => {
  const lines = [`# pid ${process.pid}: ms in total, us per call, calls, statement`];
  for (const [key, s] of [...stats].sort((a, b) => b[1].ns - a[1].ns)) {
    if (s.ns < 1e6) continue;
    lines.push(`${(s.ns / 1e6).toFixed(0).padStart(7)} ${(s.ns / s.calls / 1000).toFixed(1).padStart(7)} ${String(s.calls).padStart(8)}  ${key}`);
  }
  lines.push('# second of the run: ledger writes / COMMITs');
  seconds.forEach((s, i) => s && lines.push(`${i}s ${s.writes} / ${s.commits} = ${(s.writes / Math.max(1, s.commits)).toFixed(1)}`));
  appendFileSync(OUT, `${lines.join('\n')}\n`);
});
