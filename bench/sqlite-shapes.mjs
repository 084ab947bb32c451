#!/usr/bin/env node
// What a statement's or a table's shape costs on SQLite, measured in isolation, alternated in rounds so that
// the machine's drift falls on both sides. Two experiments of docs/performance.md ("Sixteenth session"):
//
//   npm run build && taskset -c 0 node bench/sqlite-shapes.mjs settle   the settle's UPDATE with the RETURNING
//                                                                      that reads the hold back, with less of
//                                                                      it, and without it
//   npm run build && taskset -c 0 node bench/sqlite-shapes.mjs holds    `holds` as a rowid table (its primary
//                                                                      key a second B-tree) against WITHOUT ROWID
//   npm run build && taskset -c 0 node bench/sqlite-shapes.mjs journal  the journal's and usage events' ids by
//                                                                      AUTOINCREMENT (a `sqlite_sequence` row
//                                                                      written by every transaction) or not, one
//                                                                      request's rows a transaction
//   npm run build && taskset -c 0 node bench/sqlite-shapes.mjs commit   a transaction that writes 0, 1, 2, 5,
//                                                                      10 or 20 pages (one row of as many
//                                                                      tables): what a page costs a COMMIT
//
// Prints CPU microseconds per call (settle) or per hold reserved and settled (holds), one column per round.
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newTimeOrderedId } from '../dist/core/ids.js';
import { openStore } from '../dist/runtime/node/open-store.js';

const require = createRequire(import.meta.url);
const Database = require('libsql');
const ROUNDS = 5;

function cpuUs(fn) {
  const t0 = process.cpuUsage();
  fn();
  const u = process.cpuUsage(t0);
  return u.user + u.system;
}

async function settleShapes(dir) {
  const path = join(dir, 'ledger.db');
  const store = await openStore(path, { now: () => Date.now() });
  await store.keys.createAccount({ id: 'acct_bench', name: null });
  await store.keys.insertKey({ id: 'key_bench', accountId: 'acct_bench', environment: 'live', name: null, salt: 's', secretHash: 'h', redacted: 'r', dailyCreditLimit: null });
  await store.ledger.grant({ accountId: 'acct_bench', environment: 'live', kind: 'purchased', amount: 1e12, expiresAt: null, idempotencyKey: null });
  const usage = (id) => ({ requestId: id, model: 'm', routedModel: 'b/m', routedProvider: 'b', promptTokens: 1, completionTokens: 1, outcome: 'completed', latencyMs: 1, shortfallCredits: 0 });
  for (let i = 0; i < 3000; i++) {
    const id = newTimeOrderedId('hold_');
    await store.ledger.reserve({ holdId: id, keyId: 'key_bench', amount: 50, leaseMs: 60_000 });
    await store.ledger.settle({ holdId: id, amount: 20, usage: usage(id) });
  }
  const pending = [];
  for (let i = 0; i < 8000; i++) {
    const id = newTimeOrderedId('hold_');
    pending.push(id);
    await store.ledger.reserve({ holdId: id, keyId: 'key_bench', amount: 50, leaseMs: 60_000 });
  }
  await store.close();
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  const update = `UPDATE holds SET status = 'settled', settled_amount = min(max(?1, 0), amount), finalized_at = ?2 WHERE id = ?3 AND status = 'pending'`;
  const allocations = `(SELECT json_group_array(json_array(a.grant_id, a.amount) ORDER BY a.seq) FROM hold_allocations a WHERE a.hold_id = holds.id)`;
  const parent = `(SELECT k.parent_key_id FROM api_keys k WHERE k.id = holds.key_id)`;
  const shapes = {
    'RETURNING the hold, its parent and allocations': `${update} RETURNING id, account_id, environment, key_id, day, amount, status, lease_expires_at, settled_amount, ${parent} AS parent_key_id, ${allocations} AS allocations`,
    'RETURNING the hold and its parent': `${update} RETURNING id, account_id, environment, key_id, day, amount, status, lease_expires_at, settled_amount, ${parent} AS parent_key_id`,
    'RETURNING one column': `${update} RETURNING settled_amount`,
    'no RETURNING': update,
  };
  const per = Math.floor(pending.length / Object.keys(shapes).length / ROUNDS);
  const results = Object.fromEntries(Object.keys(shapes).map((k) => [k, []]));
  let next = 0;
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, sql] of Object.entries(shapes)) {
      const statement = db.prepare(sql);
      const ids = pending.slice(next, (next += per));
      db.exec('BEGIN IMMEDIATE');
      const us = cpuUs(() => {
        for (const id of ids) {
          if (statement.reader) statement.get(20, Date.now(), id);
          else statement.run(20, Date.now(), id);
        }
      });
      db.exec('COMMIT');
      results[name].push(us / ids.length);
    }
  }
  db.close();
  return results;
}

function holdsTable(dir, withoutRowid) {
  const db = new Database(join(dir, `holds-${withoutRowid ? 'without' : 'rowid'}-${Math.random()}.db`));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  // The columns, checks and indexes of src/store/sqlite's `holds` (schema-v1.ts, schema-v10.ts, schema-v11.ts).
  db.exec(`CREATE TABLE holds (
    id TEXT PRIMARY KEY, account_id TEXT NOT NULL, environment TEXT NOT NULL CHECK (environment IN ('live', 'test')),
    key_id TEXT NOT NULL, day TEXT NOT NULL, amount INTEGER NOT NULL CHECK (amount > 0),
    status TEXT NOT NULL CHECK (status IN ('pending', 'settled', 'voided')),
    settled_amount INTEGER CHECK (settled_amount IS NULL OR (settled_amount >= 0 AND settled_amount <= amount)),
    lease_expires_at INTEGER NOT NULL, created_at INTEGER NOT NULL, finalized_at INTEGER,
    CHECK ((status = 'settled') = (settled_amount IS NOT NULL)), CHECK ((status = 'pending') = (finalized_at IS NULL))
  )${withoutRowid ? ' WITHOUT ROWID' : ''};
  CREATE INDEX holds_pending_by_owner ON holds (account_id, environment, amount) WHERE status = 'pending';`);
  return db;
}

function holdsShapes(dir) {
  const results = { 'rowid table': [], 'WITHOUT ROWID': [] };
  for (let r = 0; r < ROUNDS + 1; r++) {
    for (const name of Object.keys(results)) {
      const db = holdsTable(dir, name === 'WITHOUT ROWID');
      const insert = db.prepare(`INSERT INTO holds (id, account_id, environment, key_id, day, amount, status, lease_expires_at, created_at) VALUES (?, 'acct_123456789012', 'live', 'key_abcdefghijkl', '2026-11-29', 50, 'pending', ?, ?)`);
      const settle = db.prepare(`UPDATE holds SET status = 'settled', settled_amount = ?, finalized_at = ? WHERE id = ? AND status = 'pending'`);
      const reserveAndSettle = (count, group) => {
        for (let b = 0; b < count / group; b++) {
          const ids = Array.from({ length: group }, () => newTimeOrderedId('hold_'));
          db.exec('BEGIN IMMEDIATE');
          for (const id of ids) insert.run(id, Date.now() + 60_000, Date.now());
          db.exec('COMMIT');
          db.exec('BEGIN IMMEDIATE');
          for (const id of ids) settle.run(20, Date.now(), id);
          db.exec('COMMIT');
        }
      };
      reserveAndSettle(20_000, 1000); // a table that already holds settled holds
      const count = 8000;
      results[name].push(cpuUs(() => reserveAndSettle(count, 16)) / count); // groups of 16, as 32 in flight make
      db.close();
    }
  }
  return results;
}

function journalShapes(dir) {
  const results = { AUTOINCREMENT: [], 'INTEGER PRIMARY KEY': [] };
  for (let r = 0; r < ROUNDS + 1; r++) {
    for (const name of Object.keys(results)) {
      const db = new Database(join(dir, `journal-${r}-${name.length}.db`));
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      const id = name === 'AUTOINCREMENT' ? 'INTEGER PRIMARY KEY AUTOINCREMENT' : 'INTEGER PRIMARY KEY';
      // The columns of src/store/sqlite's ledger_entries and (a part of) usage_events.
      db.exec(`CREATE TABLE ledger_entries (id ${id}, account_id TEXT NOT NULL, environment TEXT NOT NULL, kind TEXT NOT NULL,
                 amount INTEGER NOT NULL CHECK (amount > 0), grant_id INTEGER NOT NULL, hold_id TEXT, created_at INTEGER NOT NULL);
               CREATE TABLE usage_events (id ${id}, account_id TEXT NOT NULL, hold_id TEXT NOT NULL UNIQUE, model TEXT NOT NULL,
                 credits INTEGER NOT NULL, created_at INTEGER NOT NULL);
               CREATE INDEX usage_events_by_time ON usage_events (created_at, id);`);
      const entry = db.prepare(`INSERT INTO ledger_entries (account_id, environment, kind, amount, grant_id, hold_id, created_at) VALUES ('acct', 'live', 'settle', 20, 1, ?, ?)`);
      const usage = db.prepare(`INSERT INTO usage_events (account_id, hold_id, model, credits, created_at) VALUES ('acct', ?, 'svc-fast', 20, ?)`);
      const count = 4000;
      // One request's reserve and settle, each its own transaction: what a gateway at one request in flight writes.
      const once = () => {
        const hold = newTimeOrderedId('hold_');
        db.exec('BEGIN IMMEDIATE');
        entry.run(hold, Date.now());
        db.exec('COMMIT');
        db.exec('BEGIN IMMEDIATE');
        entry.run(hold, Date.now());
        usage.run(hold, Date.now());
        db.exec('COMMIT');
      };
      for (let i = 0; i < 2000; i++) once();
      results[name].push(cpuUs(() => {
        for (let i = 0; i < count; i++) once();
      }) / count);
      db.close();
    }
  }
  return results;
}

function commitShapes(dir) {
  const counts = [0, 1, 2, 5, 10, 20];
  const results = Object.fromEntries(counts.map((k) => [`${k} pages`, []]));
  const db = new Database(join(dir, 'commit.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  // The product's setting (its checkpointer's worker copies the WAL every 100 ms); here a PASSIVE checkpoint
  // every 200 transactions, on this thread, keeps the WAL as short.
  db.pragma('wal_autocheckpoint = 10000');
  const tables = Math.max(...counts);
  for (let t = 0; t < tables; t++) db.exec(`CREATE TABLE t${t} (id INTEGER PRIMARY KEY, v INTEGER NOT NULL); INSERT INTO t${t} VALUES (1, 0);`);
  const updates = Array.from({ length: tables }, (_, t) => db.prepare(`UPDATE t${t} SET v = v + 1 WHERE id = 1`));
  let done = 0;
  const transaction = (pages) => {
    db.exec('BEGIN IMMEDIATE');
    for (let i = 0; i < pages; i++) updates[i].run();
    db.exec('COMMIT');
    if (++done % 200 === 0) db.pragma('wal_checkpoint(PASSIVE)');
  };
  const count = 3000;
  for (let r = 0; r < ROUNDS; r++) {
    for (const k of counts) {
      for (let i = 0; i < 300; i++) transaction(k);
      results[`${k} pages`].push(cpuUs(() => {
        for (let i = 0; i < count; i++) transaction(k);
      }) / count);
    }
  }
  db.close();
  return results;
}

const experiment = process.argv[2];
const experiments = {
  settle: { run: settleShapes, unit: 'a call' },
  holds: { run: holdsShapes, unit: 'a hold reserved and settled' },
  journal: { run: journalShapes, unit: "a request's two transactions" },
  commit: { run: commitShapes, unit: 'a transaction (its UPDATEs included)' },
};
if (!(experiment in experiments)) {
  console.error('usage: node bench/sqlite-shapes.mjs settle|holds|journal|commit');
  process.exit(2);
}
const dir = mkdtempSync(join(tmpdir(), 'svc-sqlite-shapes-'));
try {
  const results = await experiments[experiment].run(dir);
  console.log(`${experiment}: CPU us ${experiments[experiment].unit}, per round`);
  for (const [name, rounds] of Object.entries(results)) console.log(`  ${name.padEnd(48)} ${rounds.map((v) => v.toFixed(1).padStart(6)).join('')}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
