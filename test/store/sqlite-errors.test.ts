/**
 * A SQLite database that cannot take a write now (a full disk, another process holding the lock past the
 * busy timeout) reaches the ledger's callers as `unavailable`, which the meter retries and the gateway
 * answers with a 503 to retry, not as a driver error answered 500 (src/store/sqlite/errors.ts).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'libsql';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { StoreError } from '../../src/store/errors.js';
import { SqliteConnection, openSqliteDatabase } from '../../src/store/sqlite/database.js';
import { asStoreError } from '../../src/store/sqlite/errors.js';
import { SqliteKeyStore } from '../../src/store/sqlite/keys.js';
import { SqliteLedgerStore } from '../../src/store/sqlite/ledger.js';
import { migrate } from '../../src/store/sqlite/migrations.js';
import { T0, newKey, purchased } from './cases/harness.js';

const HOUR = 3_600_000;
let dir: string;
let path: string;
let conn: SqliteConnection;
let ledger: SqliteLedgerStore;
let keyId: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-gateway-sqlite-errors-'));
  path = join(dir, 'ledger.db');
  const clock = new ManualClock(T0);
  conn = new SqliteConnection(openSqliteDatabase(path));
  migrate(conn, clock);
  const keys = new SqliteKeyStore(conn, clock);
  ledger = new SqliteLedgerStore(conn, clock);
  await keys.createAccount({ id: 'acct', name: null });
  keyId = (await keys.insertKey(newKey('acct'))).id;
  await ledger.grant(purchased({ accountId: 'acct', keyId, environment: 'live' }, 1_000_000));
});
afterEach(async () => {
  conn.close();
  await rm(dir, { recursive: true, force: true });
});

const reserve = (i: number) => ledger.reserve({ holdId: `hold_${String(i).padStart(5, '0')}_${'p'.repeat(60)}`, keyId, amount: 1, leaseMs: HOUR });

describe('a SQLite database that cannot take the write now', () => {
  it('a full disk: the reserves it refused hear `unavailable`, hold nothing, and the books add up', async () => {
    const pages = conn.get<{ page_count: number }>('PRAGMA page_count')?.page_count ?? 0;
    conn.get(`PRAGMA max_page_count = ${pages + 4}`);
    const answers = await Promise.allSettled(Array.from({ length: 400 }, (_, i) => reserve(i)));
    const refused = answers.filter((a): a is PromiseRejectedResult => a.status === 'rejected');
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) {
      expect(r.reason).toBeInstanceOf(StoreError);
      expect(r.reason).toMatchObject({ code: 'unavailable', contention: false });
    }
    expect(refused.some((r) => /SQLITE_FULL/.test((r.reason as Error).message))).toBe(true);
    conn.get('PRAGMA max_page_count = 1073741823');
    const held = answers.length - refused.length;
    expect(conn.get<{ n: number }>('SELECT count(*) AS n FROM holds')?.n).toBe(held);
    expect((await ledger.audit()).findings).toEqual([]);
    // Room again: the same reserve goes through, as the meter's retry would.
    expect(await reserve(0)).toMatchObject({ ok: true });
  });

  it('another process holding the write lock past the busy timeout: `unavailable`', async () => {
    conn.db.pragma('busy_timeout = 50');
    const other = new Database(path);
    try {
      other.exec('BEGIN IMMEDIATE');
      await expect(reserve(1)).rejects.toMatchObject({ name: 'StoreError', code: 'unavailable', message: expect.stringMatching(/SQLITE_BUSY/) });
      // A transaction of its own (the CLI's writes, a migration) hears the same at its BEGIN.
      expect(() => conn.immediate(() => undefined)).toThrow(expect.objectContaining({ name: 'StoreError', code: 'unavailable' }) as Error);
      other.exec('ROLLBACK');
      expect(await reserve(1)).toMatchObject({ ok: true });
    } finally {
      other.close();
    }
  });

  it('a read outside any transaction, while another process holds the file exclusively: `unavailable`, not a driver error', async () => {
    // An operator's sqlite3 shell with `PRAGMA locking_mode = EXCLUSIVE` keeps even WAL readers out after its
    // first write. It can take a file only while no other connection has it open (a reader keeps a shared
    // lock on the WAL index, and a closed connection lingers until its cached statements are collected), so
    // it makes a file of its own, with the table the read names.
    const lockedPath = join(dir, 'locked.db');
    const other = new Database(lockedPath);
    let late: SqliteConnection | null = null;
    try {
      other.pragma('journal_mode = WAL');
      other.exec('CREATE TABLE accounts (id TEXT PRIMARY KEY, name TEXT, created_at INTEGER)');
      other.exec(`INSERT INTO accounts VALUES ('acct', NULL, 0)`);
      other.pragma('locking_mode = EXCLUSIVE');
      other.exec('BEGIN EXCLUSIVE');
      other.exec(`UPDATE accounts SET name = 'x'`);
      other.exec('COMMIT');
      late = new SqliteConnection(new Database(lockedPath, { timeout: 50 }));
      const keys = new SqliteKeyStore(late, new ManualClock(T0));
      await expect(keys.getAccount('acct')).rejects.toMatchObject({ name: 'StoreError', code: 'unavailable', lasting: true, message: expect.stringMatching(/SQLITE_BUSY/) });
      expect(() => late?.all('SELECT id FROM accounts')).toThrow(expect.objectContaining({ name: 'StoreError', code: 'unavailable' }) as Error);
      // The shell lets go (SQLite releases an exclusive lock at the next access after locking_mode = NORMAL).
      other.pragma('locking_mode = NORMAL');
      other.exec('SELECT count(*) FROM accounts');
      // The lock gone, the same read answers.
      expect(await keys.getAccount('acct')).toMatchObject({ id: 'acct', name: 'x' });
    } finally {
      if (other.open) other.close();
      late?.close();
    }
  });

  it('maps extended result codes by their family, and leaves constraint failures and other errors as they are', () => {
    const sqliteError = (code: string) => Object.assign(new Error(code), { code });
    // Lasting: the request's own retries give up at once.
    expect(asStoreError(sqliteError('SQLITE_IOERR_WRITE'))).toMatchObject({ code: 'unavailable', contention: false, lasting: true });
    expect(asStoreError(sqliteError('SQLITE_READONLY_DBMOVED'))).toMatchObject({ code: 'unavailable', contention: false, lasting: true });
    // The whole file's lock, not a row's: not `contention`, so the reaper ends its pass rather than wait again per hold.
    expect(asStoreError(sqliteError('SQLITE_BUSY_SNAPSHOT'))).toMatchObject({ code: 'unavailable', contention: false, lasting: true });
    // A bug or a corrupt file stays what it is (a 500, logged with its stack).
    for (const code of ['SQLITE_CONSTRAINT_CHECK', 'SQLITE_LOCKED', 'SQLITE_LOCKED_SHAREDCACHE', 'SQLITE_CORRUPT', 'SQLITE_IOERR_CORRUPTFS', 'SQLITE_IOERR_DATA', 'SQLITE_IOERRX']) {
      const error = sqliteError(code);
      expect(asStoreError(error)).toBe(error);
    }
    const plain = new Error('a bug');
    expect(asStoreError(plain)).toBe(plain);
  });
});
