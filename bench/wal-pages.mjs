#!/usr/bin/env node
// Which B-tree pages each of a request's two ledger transactions writes on SQLite, one request at a time
// (as at one connection, where no group commit shares a page): the WAL frames each COMMIT appends, named
// through SQLite's `dbstat` table. A COMMIT costs about its frames (docs/performance.md, "Eighteenth
// session": some 10 us of CPU a page on a slow day, against about 15 for an empty transaction), so this
// is the census any change to the books' layout is counted against.
//
//   npm run build && node bench/wal-pages.mjs [--warm 2000] [--requests 3] [--cap]
//
// --warm runs that many requests first (the tables then have inner pages, as a live ledger's do); --cap
// gives the key a daily credit limit. A request during which a checkpoint reset the WAL is skipped.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { newTimeOrderedId } from '../dist/core/ids.js';
import { openStore } from '../dist/runtime/node/open-store.js';

const require = createRequire(import.meta.url);
const Database = require('libsql');
const { values: opts } = parseArgs({
  options: { warm: { type: 'string', default: '2000' }, requests: { type: 'string', default: '3' }, cap: { type: 'boolean', default: false } },
});

const dir = mkdtempSync(join(tmpdir(), 'svc-wal-pages-'));
const path = join(dir, 'ledger.db');
const PAGE = 4096;
const FRAME_HEADER = 24;
const WAL_HEADER = 32;
/** mxFrame of the WAL index header (the -shm file): the frames the WAL holds, its last COMMIT's included. */
const lastFrame = () => readFileSync(`${path}-shm`).readUInt32LE(16);

const store = await openStore(path, { now: () => Date.now() });
try {
  await store.keys.createAccount({ id: 'acct_bench', name: null });
  await store.keys.insertKey({ id: 'key_bench', accountId: 'acct_bench', environment: 'live', name: null, salt: 's', secretHash: 'h', redacted: 'r', dailyCreditLimit: opts.cap ? 1e12 : null });
  await store.ledger.grant({ accountId: 'acct_bench', environment: 'live', kind: 'purchased', amount: 1e12, expiresAt: null, idempotencyKey: null });

  /** One request's store work, as bench/store-ops.mjs does it; the WAL's last frame after each COMMIT. */
  const request = async () => {
    const id = newTimeOrderedId('hold_');
    const before = lastFrame();
    await store.keys.findKey('key_bench');
    const reserved = await store.ledger.reserve({ holdId: id, keyId: 'key_bench', amount: 50, leaseMs: 60_000 });
    if (!reserved.ok) throw new Error(`reserve refused: ${reserved.reason}`);
    const afterReserve = lastFrame();
    await store.ledger.settle({
      holdId: id,
      amount: 20,
      usage: { requestId: id, model: 'svc-fast', routedModel: 'bench/m', routedProvider: 'bench', promptTokens: 300, completionTokens: 16, outcome: 'completed', latencyMs: 1, shortfallCredits: 0 },
    });
    return [before, afterReserve, lastFrame()];
  };
  for (let i = 0; i < Number(opts.warm); i++) await request();

  const pagesOf = (from, to) => {
    // Read after the frames were written: a page the transaction added to a B-tree is named too.
    const reader = new Database(path, { readonly: true });
    const names = new Map(reader.prepare('SELECT name, pageno FROM dbstat').all().map((r) => [r.pageno, r.name]));
    reader.close();
    const wal = readFileSync(`${path}-wal`);
    const out = [];
    for (let frame = from + 1; frame <= to; frame++) {
      const page = wal.readUInt32BE(WAL_HEADER + (frame - 1) * (PAGE + FRAME_HEADER));
      out.push(names.get(page) ?? `page ${page}`);
    }
    return out;
  };
  let shown = 0;
  for (let tries = 0; shown < Number(opts.requests) && tries < 10 * Number(opts.requests); tries++) {
    const [before, afterReserve, after] = await request();
    // A checkpoint that reset the WAL in between leaves no frame numbers to compare: try another request.
    if (!(before <= afterReserve && afterReserve <= after)) continue;
    const reserve = pagesOf(before, afterReserve);
    const settle = pagesOf(afterReserve, after);
    console.log(`reserve, ${reserve.length} pages: ${reserve.join(', ')}`);
    console.log(`settle, ${settle.length} pages: ${settle.join(', ')}`);
    shown += 1;
  }
} finally {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}
