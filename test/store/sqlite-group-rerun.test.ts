/**
 * Writes rolled back with their group because another write of it threw after writing are run again in a
 * new transaction (src/store/sqlite/group-commit.ts): what running a ledger write a second time posts, and
 * what bounds the reruns (SQLite's own rollback on a full or failing disk, and a budget per group).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'libsql';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { SqliteConnection, openSqliteDatabase } from '../../src/store/sqlite/database.js';
import { GroupCommit } from '../../src/store/sqlite/group-commit.js';
import { SqliteKeyStore } from '../../src/store/sqlite/keys.js';
import { SqliteLedgerStore } from '../../src/store/sqlite/ledger.js';
import { migrate } from '../../src/store/sqlite/migrations.js';
import { T0, newKey, purchased, usage } from './cases/harness.js';

const HOUR = 3_600_000;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-gateway-rerun-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('a ledger write run again after its group was rolled back', () => {
  type Setup = Awaited<ReturnType<typeof ledgerWithThrower>>;
  /** Runs a case on a fresh ledger, then checks its books add up (`audit`) and closes it. */
  async function onLedger(body: (setup: Setup) => Promise<void>): Promise<void> {
    const setup = await ledgerWithThrower();
    try {
      await body(setup);
      expect((await setup.ledger.audit()).findings).toEqual([]);
    } finally {
      setup.conn.close();
    }
  }

  async function ledgerWithThrower() {
    const clock = new ManualClock(T0);
    const conn = new SqliteConnection(openSqliteDatabase(join(dir, 'ledger.db')));
    migrate(conn, clock);
    const keys = new SqliteKeyStore(conn, clock);
    const ledger = new SqliteLedgerStore(conn, clock);
    await keys.createAccount({ id: 'acct', name: null });
    const key = await keys.insertKey(newKey('acct', { dailyCreditLimit: 1000 }));
    const owner = { accountId: 'acct', keyId: key.id, environment: 'live' as const };
    await ledger.grant(purchased(owner, 100));
    await ledger.grant(purchased(owner, 100));
    let runs = 0;
    const write = conn.write.bind(conn);
    conn.write = <T>(fn: () => T): Promise<T> =>
      write(() => {
        runs += 1;
        return fn();
      });
    /** A write that changes a row and then throws: a bug a CHECK or a foreign key caught. */
    const thrower = () =>
      write(() => {
        conn.run(`UPDATE accounts SET name = 'x' WHERE id = 'acct'`);
        throw new Error('bug after writing');
      });
    return { conn, ledger, keyId: key.id, thrower, runs: () => runs };
  }

  it('a reserve is held once and remembered once, with the facts of the run that committed', async () => {
    await onLedger(async ({ conn, ledger, keyId, thrower, runs }) => {
      const [reserved, bad] = await Promise.allSettled([ledger.reserve({ holdId: 'hold_r', keyId, amount: 150, leaseMs: HOUR }), thrower()]);
      expect(bad).toMatchObject({ status: 'rejected', reason: { message: 'bug after writing' } });
      expect(reserved).toMatchObject({ status: 'fulfilled', value: { ok: true, amount: 150 } });
      expect(runs()).toBe(2);
      expect(ledger.reservedHere.size).toBe(1);
      expect(conn.get<{ n: number }>(`SELECT count(*) AS n FROM holds`)?.n).toBe(1);
      expect(await ledger.settle({ holdId: 'hold_r', amount: 120, usage: usage() })).toMatchObject({
        status: 'settled',
        charged: 120,
        balance: { purchased: 80, reserved: 0 },
      });
    });
  });

  it('a settle of a remembered hold, and a duplicate of it in the same group, settle once and post the same books', async () => {
    await onLedger(async ({ conn, ledger, keyId, thrower }) => {
      expect(await ledger.reserve({ holdId: 'hold_s', keyId, amount: 30, leaseMs: HOUR })).toMatchObject({ ok: true });
      const [first, duplicate, bad] = await Promise.allSettled([
        ledger.settle({ holdId: 'hold_s', amount: 10, usage: usage({ requestId: 'a' }) }),
        ledger.settle({ holdId: 'hold_s', amount: 25, usage: usage({ requestId: 'b' }) }),
        thrower(),
      ]);
      expect(bad.status).toBe('rejected');
      expect(first).toMatchObject({ status: 'fulfilled', value: { status: 'settled', charged: 10, balance: { purchased: 190, reserved: 0 } } });
      expect(duplicate).toMatchObject({ status: 'fulfilled', value: { status: 'already_final', charged: 10 } });
      expect(conn.all('SELECT remaining FROM credit_grants ORDER BY id')).toEqual([{ remaining: 90 }, { remaining: 100 }]);
      expect(conn.get('SELECT count(*) AS n FROM usage_events')).toEqual({ n: 1 });
      expect(conn.get('SELECT committed FROM key_daily_usage')).toEqual({ committed: 10 });
      expect(ledger.reservedHere.size).toBe(0);
    });
  });

  it('two voids of one hold in the same group end it once', async () => {
    await onLedger(async ({ conn, ledger, keyId, thrower }) => {
      await ledger.reserve({ holdId: 'hold_v', keyId, amount: 40, leaseMs: HOUR });
      const [voided, again, bad] = await Promise.allSettled([ledger.void('hold_v'), ledger.void('hold_v'), thrower()]);
      expect(bad.status).toBe('rejected');
      expect(voided).toMatchObject({ status: 'fulfilled', value: true });
      expect(again).toMatchObject({ status: 'fulfilled', value: false });
      expect(conn.all('SELECT remaining FROM credit_grants ORDER BY id')).toEqual([{ remaining: 100 }, { remaining: 100 }]);
      expect(conn.get(`SELECT count(*) AS n FROM ledger_entries WHERE kind = 'void'`)).toEqual({ n: 1 });
    });
  });
});

describe('what bounds the reruns of a group', () => {
  let db: Database.Database;
  let path: string;
  let pending: Array<() => void>;
  let changed: number;

  beforeEach(() => {
    path = join(dir, 'g.db');
    db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (v TEXT NOT NULL)');
    pending = [];
    changed = 0;
  });
  afterEach(() => {
    db.close();
  });

  const groupWith = (rolledBack: () => void = () => undefined) =>
    new GroupCommit(db, { changes: () => changed, beforeCommit: () => undefined, committed: () => undefined, rolledBack }, (commit) => pending.push(commit));
  const rows = () => (db.prepare('SELECT count(*) AS n FROM t').get() as { n: number }).n;
  /** n writes in one group, each doing `write(i)`: their answers, how many committed; never run more than twice over. */
  async function runGroup(group: GroupCommit, n: number, write: (i: number) => void) {
    let runs = 0;
    const writes = Array.from({ length: n }, (_, i) =>
      group.run(() => {
        runs += 1;
        write(i);
        return i;
      }),
    );
    pending.shift()!();
    const answers = await Promise.allSettled(writes);
    expect(runs).toBeLessThanOrEqual(2 * n);
    return { answers, committed: answers.filter((a) => a.status === 'fulfilled').length };
  }

  it('runs a group at most twice over however many of its writes throw after writing', async () => {
    const group = groupWith();
    const n = 400;
    const { answers, committed } = await runGroup(group, n, (i) => {
      changed += db.prepare('INSERT INTO t (v) VALUES (?)').run(String(i)).changes;
      if (i >= n / 2) throw new Error('bug after writing');
    });
    // Every write that committed is answered so, every other one with an error; nothing half-written stays.
    expect(rows()).toBe(committed);
    expect(answers.slice(n / 2).every((a) => a.status === 'rejected' && (a.reason as Error).message === 'bug after writing')).toBe(true);
    // Past the budget, innocent writes are failed as before, for their callers to retry.
    expect(answers.filter((a) => a.status === 'rejected' && (a.reason as { code?: string }).code === 'unavailable').length).toBe(n / 2 - committed);
    expect(db.inTransaction).toBe(false);
  });

  it('does not run the others again when SQLite rolled the transaction back itself (a full disk)', async () => {
    const group = groupWith();
    const pages = (db.prepare('PRAGMA page_count').get() as { page_count: number }).page_count;
    // Room for some of the rows, not all: SQLITE_FULL part-way, which rolls the whole transaction back.
    db.prepare(`PRAGMA max_page_count = ${pages + 20}`).get();
    const { answers, committed } = await runGroup(group, 400, (i) => {
      changed += db.prepare('INSERT INTO t (v) VALUES (?)').run(String(i).padEnd(1000, 'x')).changes;
    });
    expect(rows()).toBe(committed);
    const refused = answers.filter((a): a is PromiseRejectedResult => a.status === 'rejected');
    expect(refused.some((a) => /SQLITE_FULL/.test((a.reason as Error).message))).toBe(true);
    // The writes the disk rolled back were not run into the same wall; they, and the write that met it, hear
    // `unavailable` (src/store/sqlite/errors.ts), which the meter retries.
    expect(refused.some((a) => /rolled the group's transaction back/.test((a.reason as Error).message))).toBe(true);
    expect(refused.every((a) => (a.reason as { code?: string }).code === 'unavailable')).toBe(true);
    // Lasting, all of them: the request's own retries would meet the same disk.
    expect(refused.every((a) => (a.reason as { lasting?: boolean }).lasting === true)).toBe(true);
    expect(db.inTransaction).toBe(false);
  });

  it('rejects every write still to run, once, when the rerun cannot take the lock', async () => {
    db.pragma('busy_timeout = 50');
    const other = new Database(path, { timeout: 50 });
    try {
      // Another connection takes the write lock the moment the group rolls back.
      const group = groupWith(() => void other.exec('BEGIN IMMEDIATE'));
      const insert = (v: string, bad = false) => () => {
        changed += db.prepare('INSERT INTO t (v) VALUES (?)').run(v).changes;
        if (bad) throw new Error('bug after writing');
        return v;
      };
      const writes = [group.run(insert('a')), group.read(() => 'read'), group.run(insert('b', true)), group.run(insert('c'))];
      pending.shift()!();
      const answers = await Promise.allSettled(writes);
      expect(answers.map((a) => (a.status === 'rejected' ? (a.reason as Error).message : a.value))).toEqual([
        expect.stringMatching(/locked|busy/i),
        expect.stringMatching(/locked|busy/i),
        'bug after writing',
        expect.stringMatching(/locked|busy/i),
      ]);
      expect(db.inTransaction).toBe(false);
      other.exec('ROLLBACK');
      expect(rows()).toBe(0);
    } finally {
      other.close();
    }
  });

  it('runs a read queued before the write that threw again, and answers it from the run that committed', async () => {
    const group = groupWith();
    const seen: number[] = [];
    const count = () => {
      seen.push(rows());
      return rows();
    };
    const insert = (v: string, bad = false) => () => {
      changed += db.prepare('INSERT INTO t (v) VALUES (?)').run(v).changes;
      if (bad) throw new Error('bug after writing');
      return v;
    };
    const answers = await Promise.allSettled(
      (() => {
        const all = [group.run(insert('a')), group.read(count), group.run(insert('x', true)), group.read(count), group.run(insert('c')), group.read(count)];
        pending.shift()!();
        return all;
      })(),
    );
    expect(answers.map((a) => (a.status === 'rejected' ? 'rejected' : a.value))).toEqual(['a', 1, 'rejected', 1, 'c', 2]);
    expect(seen).toEqual([1, 1, 1, 2]);
  });

  it('a ROLLBACK that fails too neither escapes the turn nor hides the write\'s own error; the next group commits', async () => {
    // The disk that failed the write may refuse the ROLLBACK as well; thrown from the turn's callback
    // (setImmediate), that error would end the process with every request in flight.
    const realExec = db.exec.bind(db);
    let refuse = true;
    db.exec = (sql: string) => {
      if (sql === 'ROLLBACK' && refuse) {
        refuse = false;
        realExec('ROLLBACK');
        throw Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR_WRITE' });
      }
      return realExec(sql);
    };
    const group = groupWith();
    const writes = [
      group.run(() => (changed += db.prepare('INSERT INTO t (v) VALUES (?)').run('a').changes)),
      group.run(() => {
        changed += db.prepare('INSERT INTO t (v) VALUES (?)').run('x').changes;
        throw new Error('bug after writing');
      }),
    ];
    expect(() => pending.shift()!()).not.toThrow();
    const answers = await Promise.allSettled(writes);
    expect(answers[0]).toMatchObject({ status: 'fulfilled' });
    expect(answers[1]).toMatchObject({ status: 'rejected', reason: { message: 'bug after writing' } });
    expect(rows()).toBe(1);
    const next = group.run(() => (changed += db.prepare('INSERT INTO t (v) VALUES (?)').run('b').changes));
    pending.shift()!();
    await next;
    expect(rows()).toBe(2);
  });
});
