import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'libsql';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { SqliteConnection, openSqliteDatabase } from '../../src/store/sqlite/database.js';
import { GroupCommit } from '../../src/store/sqlite/group-commit.js';
import { appendEntries } from '../../src/store/sqlite/journal.js';
import { SqliteKeyStore } from '../../src/store/sqlite/keys.js';
import { SqliteLedgerStore } from '../../src/store/sqlite/ledger.js';
import { migrate } from '../../src/store/sqlite/migrations.js';
import type { Store } from '../../src/store/types.js';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { T0, newKey, purchased, reserve, seedAccount, usage } from './cases/harness.js';

/** What another process sees: a second connection to the same file reads committed rows only. */
function names(path: string): string[] {
  const other = new Database(path);
  try {
    return (other.prepare('SELECT name FROM t ORDER BY name').all() as { name: string }[]).map((r) => r.name);
  } finally {
    other.close();
  }
}

describe('sqlite group commit', () => {
  let dir: string;
  let path: string;
  let db: Database.Database;
  let pending: Array<() => void>;
  let group: GroupCommit;
  /** Rows the test's statements changed, as SqliteConnection counts them for the group. */
  let changed: number;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-gateway-group-'));
    path = join(dir, 'g.db');
    db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.pragma('foreign_keys = ON');
    db.exec(`CREATE TABLE p (id TEXT PRIMARY KEY);
      CREATE TABLE t (name TEXT PRIMARY KEY, p TEXT REFERENCES p(id) DEFERRABLE INITIALLY DEFERRED)`);
    // The test decides when the group commits.
    pending = [];
    changed = 0;
    group = new GroupCommit(db, { changes: () => changed, beforeCommit: () => undefined, committed: () => undefined, rolledBack: () => undefined }, (commit) => pending.push(commit));
  });

  afterEach(async () => {
    db.close();
    await rm(dir, { recursive: true, force: true });
  });

  const insert = (name: string, parent: string | null = null) => () => {
    changed += db.prepare('INSERT INTO t (name, p) VALUES (?, ?)').run(name, parent).changes;
    return name;
  };

  it('commits the writes of one turn together, and resolves none of them before that commit', async () => {
    let resolved = 0;
    const a = group.run(insert('a')).then((v) => (resolved++, v));
    const b = group.run(insert('b')).then((v) => (resolved++, v));
    expect(pending).toHaveLength(1);
    await new Promise((r) => setImmediate(r));
    expect(resolved).toBe(0);
    expect(names(path)).toEqual([]);

    pending.shift()!();
    expect(await Promise.all([a, b])).toEqual(['a', 'b']);
    expect(names(path)).toEqual(['a', 'b']);
    expect(db.inTransaction).toBe(false);
  });

  it('runs a group of reads alone without a transaction, and a read among writes inside theirs, in order', async () => {
    const seen: boolean[] = [];
    const read = () => {
      seen.push(db.inTransaction);
      return names(path).length;
    };
    const alone = [group.read(read), group.read(read)];
    expect(pending).toHaveLength(1);
    pending.shift()!();
    expect(await Promise.all(alone)).toEqual([0, 0]);
    expect(seen).toEqual([false, false]);

    seen.length = 0;
    const mixed = [group.read(read), group.run(insert('a')), group.read(() => (seen.push(db.inTransaction), (db.prepare('SELECT count(*) AS n FROM t').get() as { n: number }).n))];
    expect(pending).toHaveLength(1);
    pending.shift()!();
    // Inside the group's transaction: the read after the write sees it; another connection, not until the COMMIT.
    expect(await Promise.all(mixed)).toEqual([0, 'a', 1]);
    expect(seen).toEqual([true, true]);
    // A read that throws alone fails alone.
    const failing = group.read(() => {
      throw new Error('no such table');
    });
    const fine = group.read(read);
    pending.shift()!();
    await expect(failing).rejects.toThrow('no such table');
    expect(await fine).toBe(1);
  });

  it('runs nothing before the group commits, then runs the writes in the order asked', async () => {
    const order: string[] = [];
    const a = group.run(() => (order.push('a'), insert('a')()));
    const b = group.run(() => (order.push('b'), insert('b')()));
    expect(order).toEqual([]);
    expect(db.inTransaction).toBe(false);
    pending.shift()!();
    expect(order).toEqual(['a', 'b']);
    expect(await Promise.all([a, b])).toEqual(['a', 'b']);
  });

  it('leaves the group to commit when a write throws before it wrote anything', async () => {
    const a = group.run(insert('a'));
    const refused = group.run(() => {
      throw new Error('refused before writing');
    });
    // A statement that fails is undone by SQLite itself: nothing of it is left, so the group goes on.
    const duplicate = group.run(insert('a'));
    const c = group.run(insert('c'));
    pending.shift()!();
    await expect(refused).rejects.toThrow('refused before writing');
    await expect(duplicate).rejects.toThrow(/UNIQUE/i);
    expect(await Promise.all([a, c])).toEqual(['a', 'c']);
    expect(names(path)).toEqual(['a', 'c']);
    expect(db.inTransaction).toBe(false);
  });

  it('rolls back the writes run so far when one throws after writing, then runs them again with those after it', async () => {
    const runs: string[] = [];
    const counted = (name: string) => () => {
      runs.push(name);
      return insert(name)();
    };
    const a = group.run(counted('a'));
    const bad = group.run(() => {
      runs.push('b');
      insert('b')();
      throw new Error('refused after writing');
    });
    const c = group.run(counted('c'));
    const d = group.run(() => {
      runs.push('d');
      insert('d')();
      throw new Error('refused after writing too');
    });
    const e = group.run(counted('e'));
    pending.shift()!();
    await expect(bad).rejects.toThrow('refused after writing');
    await expect(d).rejects.toThrow('refused after writing too');
    // The writes before each of them were rolled back with it and ran again: their callers hear only that
    // they committed, not the other write's bug.
    expect(await Promise.all([a, c, e])).toEqual(['a', 'c', 'e']);
    expect(runs).toEqual(['a', 'b', 'a', 'c', 'd', 'a', 'c', 'e']);
    expect(names(path)).toEqual(['a', 'c', 'e']);
    expect(db.inTransaction).toBe(false);
  });

  it('counts the rows a connection changes, through run and through a RETURNING read, to tell the two apart', async () => {
    const conn = new SqliteConnection(openSqliteDatabase(join(dir, 'conn.db')));
    try {
      conn.db.exec('CREATE TABLE n (id INTEGER PRIMARY KEY, v INTEGER NOT NULL)');
      const kept = conn.write(() => conn.run('INSERT INTO n (id, v) VALUES (1, 1)'));
      // Reads only, then throws: the group keeps the insert above.
      const readOnly = conn.write(() => {
        conn.get('SELECT v FROM n WHERE id = 1');
        throw new Error('refused after reading');
      });
      await expect(readOnly).rejects.toThrow('refused after reading');
      expect(await kept).toBe(1);
      expect(conn.get<{ v: number }>('SELECT v FROM n WHERE id = 1')?.v).toBe(1);

      // Changes a row through a read of its RETURNING clause, then throws: the group goes.
      const lost = conn.write(() => conn.run('INSERT INTO n (id, v) VALUES (2, 2)'));
      const returning = conn.write(() => {
        conn.get('UPDATE n SET v = v + 10 WHERE id = 1 RETURNING v');
        throw new Error('refused after an UPDATE ... RETURNING');
      });
      await expect(returning).rejects.toThrow('refused after an UPDATE');
      // The insert before it was rolled back with it, and ran again: the UPDATE is undone, the insert kept.
      expect(await lost).toBe(1);
      expect(conn.all<{ id: number; v: number }>('SELECT id, v FROM n ORDER BY id')).toEqual([
        { id: 1, v: 1 },
        { id: 2, v: 2 },
      ]);
    } finally {
      conn.close();
    }
  });

  it('fails every write of the group when the COMMIT fails, and leaves nothing behind', async () => {
    const a = group.run(insert('a'));
    // A deferred foreign key is checked at COMMIT: this row makes the whole group's COMMIT fail.
    const b = group.run(insert('b', 'no-such-parent'));
    pending.shift()!();
    await expect(a).rejects.toThrow(/FOREIGN KEY/i);
    await expect(b).rejects.toThrow(/FOREIGN KEY/i);
    expect(db.inTransaction).toBe(false);
    expect(names(path)).toEqual([]);

    // The next write opens a new group.
    const c = group.run(insert('c'));
    pending.shift()!();
    expect(await c).toBe('c');
    expect(names(path)).toEqual(['c']);
  });

  it('gives up on the rest at once when a write run again alone cannot take the lock', async () => {
    db.pragma('busy_timeout = 50');
    const other = new Database(path, { timeout: 50 });
    let refusedOnce = false;
    const begins: string[] = [];
    const exec = db.exec.bind(db);
    db.exec = ((sql: string) => {
      if (sql === 'BEGIN IMMEDIATE') begins.push(sql);
      return exec(sql);
    }) as typeof db.exec;
    const lockedGroup = new GroupCommit(
      db,
      {
        changes: () => changed,
        // The end-of-group work is refused once, so the writes are to run again one by one ...
        beforeCommit: () => {
          if (!refusedOnce) {
            refusedOnce = true;
            throw new Error('a row left for the end was refused');
          }
        },
        committed: () => undefined,
        // ... and meanwhile another process takes the write lock and keeps it.
        rolledBack: () => void other.exec('BEGIN IMMEDIATE'),
      },
      (commit) => pending.push(commit),
    );
    try {
      const writes = ['a', 'b', 'c'].map((name) => lockedGroup.run(insert(name)));
      pending.shift()!();
      for (const w of writes) await expect(w).rejects.toThrow(/locked|busy/i);
      // The group's BEGIN, then one more: the first write alone could not begin, and the others were not tried.
      expect(begins).toHaveLength(2);
      expect(db.inTransaction).toBe(false);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    expect(names(path)).toEqual([]);
  });

  it('flush() commits the open group at once', async () => {
    const a = group.run(insert('a'));
    group.flush();
    expect(await a).toBe('a');
    expect(names(path)).toEqual(['a']);
    // The scheduled commit then finds nothing to do.
    pending.shift()!();
    expect(db.inTransaction).toBe(false);
  });

  it('keeps the ledger exact when many requests reserve and settle in the same turns', async () => {
    const store = createSqliteStore({ path: join(dir, 'ledger.db'), clock: new ManualClock(T0) });
    await store.migrate();
    try {
      const owner = await seedAccount(store);
      await store.ledger.grant(purchased(owner, 1_000));
      // 60 concurrent requests of 30 credits against 1,000: exactly 33 fit, whatever the grouping.
      const results = await Promise.all(
        Array.from({ length: 60 }, () => reserve(store, owner, 30)),
      );
      const accepted = results.filter((r) => r.ok).map((r) => (r.ok ? r.holdId : ''));
      expect(accepted).toHaveLength(33);
      const settled = await Promise.all(
        accepted.map((holdId) => store.ledger.settle({ holdId, amount: 10, usage: usage() })),
      );
      expect(settled.every((s) => s.status === 'settled')).toBe(true);
      const balance = await store.ledger.balance(owner.accountId, 'live');
      expect(balance).toMatchObject({ purchased: 1_000 - 33 * 10, reserved: 0 });
      expect((await store.ledger.audit()).findings).toEqual([]);
      // The settles of a group add to one rollup row, written once at its end: every settle is in it.
      const days = await store.usage.rollup({ accountId: owner.accountId, environment: 'live', startDay: '1970-01-01', endDay: '9999-12-31', model: null });
      expect(days.reduce((sum, d) => sum + d.requests, 0)).toBe(33);
      expect(days.reduce((sum, d) => sum + d.credits, 0)).toBe(33 * 10);
    } finally {
      await store.close();
    }
  });

  it('checks daily caps against what the same group already held and gave back, for a key and its family', async () => {
    const store = createSqliteStore({ path: join(dir, 'caps.db'), clock: new ManualClock(T0) });
    await store.migrate();
    try {
      const root = await seedAccount(store, { dailyCreditLimit: 100 });
      await store.ledger.grant(purchased(root, 10_000));
      const kid = { ...root, keyId: (await store.keys.insertKey(newKey(root.accountId, { dailyCreditLimit: null, parentKeyId: root.keyId }))).id };
      // One group: 12 reserves of 10, alternating key and child, against the root's cap of 100: exactly 10 fit.
      const first = await Promise.all(Array.from({ length: 12 }, (_, i) => reserve(store, i % 2 === 0 ? root : kid, 10)));
      const held = first.flatMap((r) => (r.ok ? [r.holdId] : []));
      expect(held).toHaveLength(10);
      expect(first.filter((r) => !r.ok)).toEqual([
        { ok: false, reason: 'daily_limit_exceeded', limit: 100, committedToday: 100 },
        { ok: false, reason: 'daily_limit_exceeded', limit: 100, committedToday: 100 },
      ]);
      // One group: three settles at 4 give back 18, then four reserves of 6 ask for 24: the first three fit.
      const second = await Promise.all([
        ...held.slice(0, 3).map((holdId) => store.ledger.settle({ holdId, amount: 4, usage: usage() })),
        ...Array.from({ length: 4 }, (_, i) => reserve(store, i % 2 === 0 ? kid : root, 6)),
      ]);
      const again = second.slice(3) as Awaited<ReturnType<typeof reserve>>[];
      expect(again.map((r) => r.ok)).toEqual([true, true, true, false]);
      expect(again[3]).toEqual({ ok: false, reason: 'daily_limit_exceeded', limit: 100, committedToday: 100 });
      // The counters as written agree with the holds (the audit's daily_cap_counter check).
      expect((await store.ledger.audit()).findings).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('runs the work left for the end of a transaction once before its COMMIT, and drops it with a rollback', async () => {
    const conn = new SqliteConnection(openSqliteDatabase(join(dir, 'at-commit.db')));
    try {
      conn.db.exec('CREATE TABLE total (id INTEGER PRIMARY KEY, v INTEGER NOT NULL); INSERT INTO total VALUES (1, 0)');
      class Add {
        n = 0;
        runs = 0;
        run(c: SqliteConnection): void {
          this.runs += 1;
          c.run('UPDATE total SET v = v + ? WHERE id = 1', this.n);
        }
      }
      const total = () => conn.get<{ v: number }>('SELECT v FROM total WHERE id = 1')?.v;
      const add = (n: number) => () => {
        const work = conn.atCommit('total', () => new Add());
        work.n += n;
        return work;
      };
      const writes = [conn.write(add(1)), conn.write(add(2)), conn.write(add(3))];
      const [first, second] = await Promise.all(writes);
      expect(first).toBe(second);
      expect(first?.runs).toBe(1);
      expect(total()).toBe(6);

      // A write that threw after leaving work: the work goes with the writes rolled back, and theirs is
      // left again when they run again.
      const kept = conn.write(add(10));
      const bad = conn.write(() => {
        add(100)();
        throw new Error('refused after leaving work');
      });
      const after = conn.write(add(1000));
      await expect(bad).rejects.toThrow('refused after leaving work');
      const [keptWork, afterWork] = await Promise.all([kept, after]);
      expect(keptWork).toBe(afterWork);
      expect(keptWork?.n).toBe(1010);
      expect(keptWork?.runs).toBe(1);
      expect(total()).toBe(1016);

      // A transaction of its own runs its work too.
      conn.immediate(add(5));
      expect(total()).toBe(1021);
    } finally {
      conn.close();
    }
  });


  it('tells a write that asked once its transaction committed, and never if it rolled back', async () => {
    const conn = new SqliteConnection(openSqliteDatabase(join(dir, 'after-commit.db')));
    try {
      conn.db.exec('CREATE TABLE t (v TEXT NOT NULL UNIQUE)');
      const heard: string[] = [];
      const insert = (v: string) => () => {
        conn.run('INSERT INTO t (v) VALUES (?)', v);
        conn.afterCommit(() => heard.push(v));
      };
      // Heard before the write's own promise resolves: a caller acting on its answer finds what it asked for.
      const first = conn.write(insert('a')).then(() => [...heard]);
      expect(await first).toEqual(['a']);

      // Rolled back with its group (a later write threw after writing), then run again: heard once, for the
      // COMMIT that holds it; the write that threw, never.
      const rolledBack = conn.write(insert('b'));
      const bad = conn.write(() => {
        conn.run(`INSERT INTO t (v) VALUES ('c')`);
        conn.afterCommit(() => heard.push('c'));
        throw new Error('refused after writing');
      });
      const after = conn.write(insert('d'));
      await expect(bad).rejects.toThrow('refused after writing');
      await Promise.all([rolledBack, after]);
      expect(heard).toEqual(['a', 'b', 'd']);

      // A COMMIT-time refusal runs the writes again one by one: only those that commit are heard.
      const again = conn.write(insert('e'));
      const duplicate = conn.write(() => {
        conn.atCommit('dup', () => ({ run: (c: SqliteConnection) => void c.run(`INSERT INTO t (v) VALUES ('a')`) }));
        conn.afterCommit(() => heard.push('dup'));
      });
      await again;
      await expect(duplicate).rejects.toThrow(/UNIQUE/);
      expect(heard).toEqual(['a', 'b', 'd', 'e']);

      // A transaction of its own: heard after its COMMIT; not at all if it throws.
      conn.immediate(insert('f'));
      expect(() =>
        conn.immediate(() => {
          insert('g')();
          throw new Error('refused');
        }),
      ).toThrow('refused');
      expect(heard).toEqual(['a', 'b', 'd', 'e', 'f']);

      // A write that asks and then throws before writing a row: asking counts as a change, so the group
      // rolls back with it (and the others run again) rather than telling it of a COMMIT it has no part in.
      const before = conn.write(insert('h'));
      const asksThenThrows = conn.write(() => {
        conn.afterCommit(() => heard.push('asked'));
        throw new Error('refused before writing');
      });
      await expect(asksThenThrows).rejects.toThrow('refused before writing');
      await before;
      expect(heard).toEqual(['a', 'b', 'd', 'e', 'f', 'h']);

      // Outside a write's transaction (a group of reads alone) there is no COMMIT to wait for.
      await expect(conn.batched(() => conn.afterCommit(() => heard.push('read')))).rejects.toThrow(/outside a write transaction/);
      await conn.write(insert('i'));
      expect(heard).toEqual(['a', 'b', 'd', 'e', 'f', 'h', 'i']);
    } finally {
      conn.close();
    }
  });

  it('answers the writes of a committed group even if a callback after its COMMIT throws, and runs the others', async () => {
    const conn = new SqliteConnection(openSqliteDatabase(join(dir, 'after-commit-throws.db')));
    const warnings: string[] = [];
    const onWarning = (w: Error): void => void warnings.push(w.message);
    process.on('warning', onWarning);
    try {
      conn.db.exec('CREATE TABLE t (v TEXT NOT NULL)');
      const heard: string[] = [];
      const [first, second] = await Promise.all([
        conn.write(() => {
          conn.run(`INSERT INTO t (v) VALUES ('a')`);
          conn.afterCommit(() => {
            throw new Error('a bug');
          });
          return 'a';
        }),
        conn.write(() => {
          conn.run(`INSERT INTO t (v) VALUES ('b')`);
          conn.afterCommit(() => heard.push('b'));
          return 'b';
        }),
      ]);
      expect([first, second]).toEqual(['a', 'b']);
      expect(heard).toEqual(['b']);
      expect(conn.all<{ v: string }>('SELECT v FROM t ORDER BY v')).toEqual([{ v: 'a' }, { v: 'b' }]);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.some((w) => w.includes('a bug'))).toBe(true);
    } finally {
      process.off('warning', onWarning);
      conn.close();
    }
  });
  it('writes a group\'s journal rows and usage events at its end, every one and in the order written', async () => {
    const store = createSqliteStore({ path: join(dir, 'rows.db'), clock: new ManualClock(T0) });
    await store.migrate();
    try {
      const owner = await seedAccount(store);
      const grant = (await store.ledger.grant(purchased(owner, 100_000))).grant;
      // 45 holds in one group, settled in one group: 45 reserve rows, 90 settle and release rows, 45 events,
      // more than one multi-row INSERT holds (32 rows).
      const holdIds = Array.from({ length: 45 }, (_, i) => `hold_order_${String(i).padStart(2, '0')}`);
      await Promise.all(holdIds.map((holdId, i) => store.ledger.reserve({ holdId, keyId: owner.keyId, amount: 100 + i, leaseMs: 60_000 })));
      await Promise.all(holdIds.map((holdId, i) => store.ledger.settle({ holdId, amount: i, usage: usage({ requestId: `req_${i}` }) })));
      const db = new Database(join(dir, 'rows.db'));
      try {
        const entries = db.prepare('SELECT kind, amount, hold_id FROM ledger_entries WHERE hold_id IS NOT NULL ORDER BY id').all() as { kind: string; amount: number; hold_id: string }[];
        const expected = [
          ...holdIds.map((holdId, i) => ({ kind: 'reserve', amount: 100 + i, hold_id: holdId })),
          ...holdIds.flatMap((holdId, i) => [
            ...(i > 0 ? [{ kind: 'settle', amount: i, hold_id: holdId }] : []),
            { kind: 'release', amount: 100, hold_id: holdId },
          ]),
        ];
        expect(entries).toEqual(expected);
        const events = db.prepare('SELECT hold_id, request_id, credits FROM usage_events ORDER BY id').all();
        expect(events).toEqual(holdIds.map((holdId, i) => ({ hold_id: holdId, request_id: `req_${i}`, credits: i })));
      } finally {
        db.close();
      }
      expect((await store.ledger.balance(owner.accountId, 'live')).purchased).toBe(grant.amount - (44 * 45) / 2);
      expect((await store.ledger.audit()).findings).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('fails only the write whose row is refused at the group\'s end, and commits the others', async () => {
    const clock = new ManualClock(T0);
    const conn = new SqliteConnection(openSqliteDatabase(join(dir, 'refused.db')));
    migrate(conn, clock);
    // Only what seedAccount and the ledger calls below use.
    const store = { keys: new SqliteKeyStore(conn, clock), ledger: new SqliteLedgerStore(conn, clock) } as unknown as Store;
    try {
      const owner = await seedAccount(store);
      const { grant } = await store.ledger.grant(purchased(owner, 1_000));
      const held = await Promise.all(['hold_a', 'hold_p', 'hold_c'].map((holdId) => store.ledger.reserve({ holdId, keyId: owner.keyId, amount: 50, leaseMs: 60_000 })));
      expect(held.every((r) => r.ok)).toBe(true);
      // A usage event refused at the end (what a full disk or a bug caught by a constraint would do).
      conn.db.exec(`CREATE TRIGGER poison BEFORE INSERT ON usage_events WHEN NEW.request_id = 'req_poison'
        BEGIN SELECT RAISE(ABORT, 'simulated refusal'); END`);
      // One group: three settles, one with the refused event, a reserve, a key read, and a journal row
      // that breaks the table's CHECK (amount > 0).
      const results = await Promise.allSettled([
        store.ledger.settle({ holdId: 'hold_a', amount: 10, usage: usage({ requestId: 'req_a' }) }),
        store.ledger.settle({ holdId: 'hold_p', amount: 10, usage: usage({ requestId: 'req_poison' }) }),
        store.ledger.settle({ holdId: 'hold_c', amount: 10, usage: usage({ requestId: 'req_c' }) }),
        store.ledger.reserve({ holdId: 'hold_d', keyId: owner.keyId, amount: 50, leaseMs: 60_000 }),
        store.keys.findKey(owner.keyId),
        conn.write(() =>
          appendEntries(conn, [{ accountId: owner.accountId, environment: 'live', kind: 'release', amount: -5, grantId: Number(grant.id), holdId: null }], T0),
        ),
      ]);
      const [a, p, c, d, key, refused] = results;
      expect(a).toMatchObject({ status: 'fulfilled', value: { status: 'settled', charged: 10 } });
      expect(p).toMatchObject({ status: 'rejected', reason: { message: expect.stringMatching(/simulated refusal/) } });
      expect(c).toMatchObject({ status: 'fulfilled', value: { status: 'settled', charged: 10 } });
      expect(d).toMatchObject({ status: 'fulfilled', value: { ok: true, holdId: 'hold_d' } });
      expect(key).toMatchObject({ status: 'fulfilled', value: { id: owner.keyId } });
      expect(refused).toMatchObject({ status: 'rejected', reason: { message: expect.stringMatching(/CHECK constraint failed/) } });
      // The refused settle left nothing: its hold is pending, for a retry or the reaper.
      expect(conn.get<{ status: string }>('SELECT status FROM holds WHERE id = ?', 'hold_p')?.status).toBe('pending');
      expect(conn.all<{ request_id: string }>('SELECT request_id FROM usage_events ORDER BY id').map((r) => r.request_id)).toEqual(['req_a', 'req_c']);
      expect(conn.get<{ n: number }>('SELECT count(*) AS n FROM ledger_entries WHERE amount < 0')?.n).toBe(0);
      expect(await store.ledger.balance(owner.accountId, 'live')).toMatchObject({ purchased: 1_000 - 20 - 100, reserved: 100 });
      conn.db.exec('DROP TRIGGER poison');
      expect(await store.ledger.settle({ holdId: 'hold_p', amount: 10, usage: usage({ requestId: 'req_poison' }) })).toMatchObject({ status: 'settled', charged: 10 });
      expect((await store.ledger.audit()).findings).toEqual([]);
    } finally {
      conn.close();
    }
  });
});
