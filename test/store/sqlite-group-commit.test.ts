import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'libsql';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { GroupCommit } from '../../src/store/sqlite/group-commit.js';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { T0, purchased, reserve, seedAccount, usage } from './cases/harness.js';

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
    group = new GroupCommit(db, (commit) => pending.push(commit));
  });

  afterEach(async () => {
    db.close();
    await rm(dir, { recursive: true, force: true });
  });

  const insert = (name: string, parent: string | null = null) => () => {
    db.prepare('INSERT INTO t (name, p) VALUES (?, ?)').run(name, parent);
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

  it('undoes a write that throws, and only that write', async () => {
    const a = group.run(insert('a'));
    const bad = group.run(() => {
      insert('b')();
      throw new Error('refused after writing');
    });
    const c = group.run(insert('c'));
    await expect(bad).rejects.toThrow('refused after writing');
    pending.shift()!();
    expect(await Promise.all([a, c])).toEqual(['a', 'c']);
    expect(names(path)).toEqual(['a', 'c']);
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
    } finally {
      await store.close();
    }
  });
});
