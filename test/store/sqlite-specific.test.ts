import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { SqliteConnection, openSqliteDatabase } from '../../src/store/sqlite/database.js';
import { EXPIRED_HOLDS_SQL } from '../../src/store/sqlite/holds.js';
import { SqliteLedgerStore } from '../../src/store/sqlite/ledger.js';
import { migrate, migrations } from '../../src/store/sqlite/migrations.js';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/types.js';
import { HOUR, T0, earned, hold, newKey, purchased, seedAccount, usage } from './cases/harness.js';
import { type StuckHoldContext, voidsPastAPageOfStuckHolds, voidsPastAStuckHold } from './cases/stuck-hold.case.js';

/** What only SQLite has: pragmas, the migration table, CHECK and trigger backstops, two processes on one file. */
describe('sqlite store specifics', () => {
  let dir: string;
  let path: string;
  let clock: ManualClock;
  let store: Store;
  let raw: SqliteConnection;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-gateway-sqlite-'));
    path = join(dir, 'gateway.db');
    clock = new ManualClock(T0);
    store = createSqliteStore({ path, clock });
    await store.migrate();
    raw = new SqliteConnection(openSqliteDatabase(path));
  });

  afterEach(async () => {
    raw.close();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('opens in WAL mode with foreign keys, NORMAL sync and a busy timeout', () => {
    expect(raw.get<{ journal_mode: string }>('PRAGMA journal_mode')?.journal_mode).toBe('wal');
    expect(raw.get<{ foreign_keys: number }>('PRAGMA foreign_keys')?.foreign_keys).toBe(1);
    expect(raw.get<{ synchronous: number }>('PRAGMA synchronous')?.synchronous).toBe(1);
    expect(raw.get<{ timeout: number }>('PRAGMA busy_timeout')?.timeout).toBe(5_000);
  });

  it('records each migration once', async () => {
    await store.migrate();
    const rows = raw.all<{ version: number; name: string }>('SELECT version, name FROM schema_migrations');
    expect(rows).toEqual(migrations.map(({ version, name }) => ({ version, name })));
  });

  it('applies only the migrations not yet applied', () => {
    const extra = { version: 999, name: 'extra', sql: 'CREATE TABLE extra_table (id INTEGER PRIMARY KEY);' };
    expect(migrate(raw, clock, [...migrations, extra])).toEqual([999]);
    expect(migrate(raw, clock, [...migrations, extra])).toEqual([]);
    expect(() => migrate(raw, clock, migrations)).toThrow(/does not know/);
  });

  it('refuses a migration renamed after it was applied', () => {
    const renamed = migrations.map((m) => ({ ...m, name: `${m.name}_edited` }));
    expect(() => migrate(raw, clock, renamed)).toThrow(/named/);
  });

  it('sums the pending holds of a balance from their index alone, once migrated from a database that has some', async () => {
    const older = new SqliteConnection(openSqliteDatabase(join(dir, 'v9.db')));
    try {
      migrate(older, clock, migrations.filter((m) => m.version <= 9));
      older.run("INSERT INTO accounts (id, name, created_at) VALUES ('acct_v9', NULL, 0)");
      older.run(
        `INSERT INTO api_keys (id, account_id, environment, name, salt, secret_hash, redacted, daily_credit_limit, created_at)
         VALUES ('key_v9', 'acct_v9', 'live', NULL, 's', 'h', 'r', NULL, 0)`,
      );
      for (const [id, amount, status] of [['h1', 30, 'pending'], ['h2', 12, 'pending'], ['h3', 99, 'voided']] as const) {
        older.run(
          `INSERT INTO holds (id, account_id, environment, key_id, day, amount, status, lease_expires_at, created_at, finalized_at)
           VALUES (?, 'acct_v9', 'live', 'key_v9', '2025-01-15', ?, ?, 0, 0, ?)`,
          id,
          amount,
          status,
          status === 'pending' ? null : 1,
        );
      }
      expect(migrate(older, clock)).toEqual(migrations.filter((m) => m.version > 9).map((m) => m.version));
      const reserved = `SELECT COALESCE(SUM(amount), 0) AS reserved FROM holds WHERE account_id = ? AND environment = ? AND status = 'pending'`;
      expect(older.get<{ reserved: number }>(reserved, 'acct_v9', 'live')?.reserved).toBe(42);
      const plan = older.all<{ detail: string }>(`EXPLAIN QUERY PLAN ${reserved}`, 'acct_v9', 'live').map((row) => row.detail);
      expect(plan).toEqual([expect.stringContaining('USING COVERING INDEX holds_pending_by_owner')]);
    } finally {
      older.close();
    }
  });

  it('lists the holds due to the reaper from the pending holds alone once the lease index is gone (schema v11)', async () => {
    const older = createSqliteStore({ path: join(dir, 'v10.db'), clock });
    const olderRaw = new SqliteConnection(openSqliteDatabase(join(dir, 'v10.db')));
    try {
      migrate(olderRaw, clock, migrations.filter((m) => m.version <= 10));
      const owner = await seedAccount(older);
      await older.ledger.grant(purchased(owner, 1_000));
      // Past holds the reaper must not walk, and two pending ones: one due, one not.
      for (let i = 0; i < 50; i++) {
        await older.ledger.reserve({ holdId: `hold_past_${i}`, keyId: owner.keyId, amount: 1, leaseMs: HOUR });
        await older.ledger.settle({ holdId: `hold_past_${i}`, amount: 1, usage: usage() });
      }
      await older.ledger.reserve({ holdId: 'hold_due', keyId: owner.keyId, amount: 5, leaseMs: 1_000 });
      await older.ledger.reserve({ holdId: 'hold_live', keyId: owner.keyId, amount: 7, leaseMs: 10 * HOUR });
      const index = () => olderRaw.all<{ name: string }>(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'holds'`).map((r) => r.name);
      expect(index()).toContain('holds_pending_by_lease');
      expect(migrate(olderRaw, clock)).toEqual(migrations.filter((m) => m.version > 10).map((m) => m.version));
      expect(index()).not.toContain('holds_pending_by_lease');
      const plan = olderRaw.all<{ detail: string }>(`EXPLAIN QUERY PLAN ${EXPIRED_HOLDS_SQL}`, T0, 10).map((row) => row.detail);
      expect(plan[0]).toContain('USING COVERING INDEX holds_pending_by_owner');
      clock.advance(2_000);
      expect(await older.ledger.reapExpiredHolds(10)).toBe(1);
      expect(olderRaw.all<{ id: string; status: string }>(`SELECT id, status FROM holds WHERE id IN ('hold_due', 'hold_live') ORDER BY id`)).toEqual([
        { id: 'hold_due', status: 'voided' },
        { id: 'hold_live', status: 'pending' },
      ]);
    } finally {
      olderRaw.close();
      await older.close();
    }
  });

  it('keeps CHECK constraints as a backstop against negative balances', async () => {
    const owner = await seedAccount(store);
    await store.ledger.grant(purchased(owner, 10));
    expect(() => raw.run('UPDATE credit_grants SET remaining = -1')).toThrow(/CHECK/);
    expect(() => raw.run('UPDATE credit_grants SET remaining = amount + 1')).toThrow(/CHECK/);
    expect(() => raw.run("UPDATE credit_grants SET expires_at = NULL, kind = 'earned'")).toThrow(/CHECK/);
  });

  it('keeps ledger_entries append-only', async () => {
    const owner = await seedAccount(store);
    await store.ledger.grant(purchased(owner, 10));
    expect(() => raw.run('UPDATE ledger_entries SET amount = 1')).toThrow(/append-only/);
    expect(() => raw.run('DELETE FROM ledger_entries')).toThrow(/append-only/);
  });

  it('journals enough to recompute every grant and hold', async () => {
    const owner = await seedAccount(store);
    await store.ledger.grant(earned(owner, 30, T0 + HOUR));
    await store.ledger.grant(purchased(owner, 20));
    const settled = await hold(store, owner, 35);
    await hold(store, owner, 5);
    const voided = await hold(store, owner, 4);
    await store.ledger.settle({ holdId: settled, amount: 12, usage: usage() });
    await store.ledger.void(voided);
    clock.advance(2 * HOUR);
    await store.ledger.reapExpiredHolds(10);

    const grants = raw.all<{ id: number; remaining: number; replayed: number }>(
      `SELECT g.id, g.remaining,
         COALESCE(SUM(CASE e.kind WHEN 'grant' THEN e.amount WHEN 'reserve' THEN -e.amount
                                  WHEN 'release' THEN e.amount WHEN 'void' THEN e.amount
                                  WHEN 'expire' THEN -e.amount ELSE 0 END), 0) AS replayed
       FROM credit_grants g LEFT JOIN ledger_entries e ON e.grant_id = g.id GROUP BY g.id, g.remaining`,
    );
    expect(grants).toHaveLength(2);
    for (const grant of grants) expect(grant.replayed).toBe(grant.remaining);

    const holds = raw.all<{ id: string; status: string; settled_amount: number | null; reserved: number; spent: number; back: number }>(
      `SELECT h.id, h.status, h.settled_amount,
         SUM(CASE e.kind WHEN 'reserve' THEN e.amount ELSE 0 END) AS reserved,
         SUM(CASE e.kind WHEN 'settle' THEN e.amount ELSE 0 END) AS spent,
         SUM(CASE WHEN e.kind IN ('release', 'void') THEN e.amount ELSE 0 END) AS back
       FROM holds h JOIN ledger_entries e ON e.hold_id = h.id GROUP BY h.id`,
    );
    expect(holds).toHaveLength(3);
    for (const h of holds) {
      expect(h.status).not.toBe('pending');
      expect(h.reserved).toBe(h.spent + h.back);
      expect(h.spent).toBe(h.settled_amount ?? 0);
    }
  });

  describe('writes of one turn, in one transaction (grants, allocations and balances written at its end)', () => {
    it('lets a reserve spend what a settle of the same transaction gave back to a grant its row says is empty', async () => {
      const owner = await seedAccount(store);
      await store.ledger.grant(purchased(owner, 100));
      const first = await hold(store, owner, 100);
      expect(raw.get<{ remaining: number }>('SELECT remaining FROM credit_grants')?.remaining).toBe(0);
      // Asked in one turn: one transaction, the settle first.
      const [settled, second] = await Promise.all([
        store.ledger.settle({ holdId: first, amount: 40, usage: usage() }),
        store.ledger.reserve({ holdId: 'hold_second', keyId: owner.keyId, amount: 50, leaseMs: HOUR }),
      ]);
      expect(settled.status).toBe('settled');
      expect(second).toMatchObject({ ok: true, amount: 50 });
      expect(raw.get<{ remaining: number }>('SELECT remaining FROM credit_grants')?.remaining).toBe(10);
      // A third draw in one transaction sees what the two before it left, not the row.
      const [third, fourth] = await Promise.all([
        store.ledger.reserve({ holdId: 'hold_third', keyId: owner.keyId, amount: 10, leaseMs: HOUR }),
        store.ledger.reserve({ holdId: 'hold_fourth', keyId: owner.keyId, amount: 1, leaseMs: HOUR }),
      ]);
      expect(third.ok).toBe(true);
      expect(fourth).toMatchObject({ ok: false, reason: 'insufficient_credits', available: 0 });
      expect((await store.ledger.audit()).findings).toEqual([]);
    });

    it('reports to every settle of a transaction the balance it commits', async () => {
      const owner = await seedAccount(store);
      await store.ledger.grant(purchased(owner, 1000));
      const a = await hold(store, owner, 100);
      const b = await hold(store, owner, 100);
      const [settledA, settledB] = await Promise.all([
        store.ledger.settle({ holdId: a, amount: 30, usage: usage() }),
        store.ledger.settle({ holdId: b, amount: 50, usage: usage() }),
      ]);
      const committed = await store.ledger.balance(owner.accountId, owner.environment);
      expect(committed).toMatchObject({ purchased: 920, reserved: 0 });
      expect(settledA.status === 'settled' && settledA.balance).toEqual(committed);
      expect(settledB.status === 'settled' && settledB.balance).toEqual(committed);
      // Each its own object: a caller that changes one changes no other request's answer.
      expect(settledA.status === 'settled' && settledB.status === 'settled' && settledA.balance !== settledB.balance).toBe(true);
    });

    it('settles a hold in the transaction that made it, returning what it did not spend to the grants it drew from', async () => {
      const owner = await seedAccount(store);
      await store.ledger.grant(earned(owner, 30, T0 + HOUR));
      await store.ledger.grant(purchased(owner, 30));
      const [reserved, settled] = await Promise.all([
        store.ledger.reserve({ holdId: 'hold_fast', keyId: owner.keyId, amount: 45, leaseMs: HOUR }),
        store.ledger.settle({ holdId: 'hold_fast', amount: 35, usage: usage() }),
      ]);
      expect(reserved.ok).toBe(true);
      expect(settled).toMatchObject({ status: 'settled', charged: 35, balance: { earned: 0, purchased: 25, reserved: 0 } });
      expect(raw.all<{ remaining: number }>('SELECT remaining FROM credit_grants ORDER BY id')).toEqual([{ remaining: 0 }, { remaining: 25 }]);
      expect((await store.ledger.audit()).findings).toEqual([]);
    });

    it('returns every credit of a hold voided in the transaction that made it', async () => {
      const owner = await seedAccount(store);
      await store.ledger.grant(earned(owner, 30, T0 + HOUR));
      await store.ledger.grant(purchased(owner, 30));
      const [reserved, voided] = await Promise.all([
        store.ledger.reserve({ holdId: 'hold_both', keyId: owner.keyId, amount: 45, leaseMs: HOUR }),
        store.ledger.void('hold_both'),
      ]);
      expect(reserved.ok).toBe(true);
      expect(voided).toBe(true);
      expect(raw.all<{ kind: string; remaining: number }>('SELECT kind, remaining FROM credit_grants ORDER BY id')).toEqual([
        { kind: 'earned', remaining: 30 },
        { kind: 'purchased', remaining: 30 },
      ]);
      expect(raw.all<{ seq: number; amount: number }>("SELECT seq, amount FROM hold_allocations WHERE hold_id = 'hold_both' ORDER BY seq")).toEqual([
        { seq: 0, amount: 30 },
        { seq: 1, amount: 15 },
      ]);
      expect((await store.ledger.audit()).findings).toEqual([]);
    });
  });

  describe('the facts of a hold it reserved, kept for its settle (reserved-holds.ts)', () => {
    it('settles on them, and answers as it would have read them: capped at the hold, already final once another process ended it', async () => {
      const ledger = store.ledger as SqliteLedgerStore;
      const owner = await seedAccount(store);
      await store.ledger.grant(earned(owner, 30, T0 + HOUR));
      await store.ledger.grant(purchased(owner, 100));
      const first = await hold(store, owner, 50);
      expect(ledger.reservedHere.size).toBe(1);
      expect(await store.ledger.settle({ holdId: first, amount: 80, usage: usage() })).toMatchObject({
        status: 'settled',
        charged: 50,
        balance: { earned: 0, purchased: 80, reserved: 0 },
      });
      expect(ledger.reservedHere.size).toBe(0);
      // Ended by another process (the CLI, or a second server's reaper) while this one still knows it.
      const second = await hold(store, owner, 20);
      const cli = createSqliteStore({ path, clock });
      try {
        expect(await cli.ledger.void(second)).toBe(true);
      } finally {
        await cli.close();
      }
      expect(await store.ledger.settle({ holdId: second, amount: 5, usage: usage() })).toMatchObject({
        status: 'already_final',
        charged: 0,
        voided: true,
      });
      expect(raw.get<{ n: number }>('SELECT count(*) AS n FROM usage_events')?.n).toBe(1);
      expect((await store.ledger.audit()).findings).toEqual([]);
    });

    it('remembers nothing of a reserve its group rolled back: a hold of that id made elsewhere settles on its own facts', async () => {
      const owner = await seedAccount(store);
      await store.ledger.grant(purchased(owner, 100));
      const conn = new SqliteConnection(openSqliteDatabase(path));
      try {
        const ledger = new SqliteLedgerStore(conn, clock);
        // The reserve shares its group with a write whose row breaks a foreign key checked only at COMMIT: the
        // COMMIT fails, and the whole group is rolled back.
        const [reserved, broken] = await Promise.allSettled([
          ledger.reserve({ holdId: 'hold_shared', keyId: owner.keyId, amount: 50, leaseMs: HOUR }),
          conn.write(() => {
            conn.run('PRAGMA defer_foreign_keys = ON');
            conn.run(`INSERT INTO api_keys (id, account_id, environment, name, salt, secret_hash, redacted, created_at)
                      VALUES ('key_dangling', 'acct_missing', 'live', NULL, 's', 'h', 'r', 0)`);
          }),
        ]);
        expect(reserved).toMatchObject({ status: 'rejected', reason: { message: expect.stringMatching(/FOREIGN KEY/i) } });
        expect(broken.status).toBe('rejected');
        expect(await store.ledger.countPendingHolds()).toBe(0);
        expect(ledger.reservedHere.size).toBe(0);
        // Another process then makes the hold under the same id (an Idempotency-Key's), for less.
        expect(await store.ledger.reserve({ holdId: 'hold_shared', keyId: owner.keyId, amount: 30, leaseMs: HOUR })).toMatchObject({ ok: true, amount: 30 });
        expect(await ledger.settle({ holdId: 'hold_shared', amount: 40, usage: usage() })).toMatchObject({
          status: 'settled',
          charged: 30,
          balance: { purchased: 70, reserved: 0 },
        });
      } finally {
        conn.close();
      }
      expect((await store.ledger.audit()).findings).toEqual([]);
    });

    it('posts the same books and answers from them as from the hold read back, for every key shape and charge', async () => {
      const books: string[] = [];
      for (const mode of ['remembered', 'read back']) {
        const modeClock = new ManualClock(T0);
        const modeStore = createSqliteStore({ path: join(dir, `${mode}.db`), clock: modeClock });
        try {
          await modeStore.migrate();
          const ledger = modeStore.ledger as SqliteLedgerStore;
          await modeStore.keys.createAccount({ id: 'acct', name: null });
          // A capped root, a capped child and an uncapped grandchild: the settle releases every cap on the chain.
          await modeStore.keys.insertKey(newKey('acct', { id: 'key_root', dailyCreditLimit: 1_000_000 }));
          await modeStore.keys.insertKey(newKey('acct', { id: 'key_child', parentKeyId: 'key_root', dailyCreditLimit: 500_000 }));
          await modeStore.keys.insertKey(newKey('acct', { id: 'key_grandchild', parentKeyId: 'key_child' }));
          const owner = { accountId: 'acct', keyId: 'key_root', environment: 'live' as const };
          await modeStore.ledger.grant(earned(owner, 30, T0 + HOUR));
          await modeStore.ledger.grant(purchased(owner, 100_000));
          const answers: unknown[] = [];
          let n = 0;
          for (const amount of [0, 1, 29, 30, 31, 44, 45, 46, Number.MAX_SAFE_INTEGER]) {
            for (const keyId of ['key_root', 'key_child', 'key_grandchild']) {
              const holdId = `hold_${n++}`;
              expect((await modeStore.ledger.reserve({ holdId, keyId, amount: 45, leaseMs: HOUR })).ok).toBe(true);
              if (mode === 'read back') ledger.reservedHere.take(raw, holdId);
              modeClock.advance(1);
              answers.push(await modeStore.ledger.settle({ holdId, amount, usage: usage({ requestId: holdId }) }));
              answers.push(await modeStore.ledger.settle({ holdId, amount, usage: usage({ requestId: holdId }) }));
            }
          }
          expect(ledger.reservedHere.size).toBe(0);
          expect((await modeStore.ledger.audit()).findings).toEqual([]);
          const tables = ['holds', 'hold_allocations', 'ledger_entries', 'usage_events', 'usage_daily', 'key_daily_usage', 'credit_grants'];
          const modeRaw = new SqliteConnection(openSqliteDatabase(join(dir, `${mode}.db`)));
          try {
            books.push(JSON.stringify({ answers, tables: tables.map((t) => modeRaw.all(`SELECT * FROM ${t} ORDER BY 1, 2, 3`)) }));
          } finally {
            modeRaw.close();
          }
        } finally {
          await modeStore.close();
        }
      }
      expect(books[0]).toEqual(books[1]);
    });

    it('forgets the facts of a hold ended in the transaction that made it', async () => {
      const ledger = store.ledger as SqliteLedgerStore;
      const owner = await seedAccount(store);
      await store.ledger.grant(purchased(owner, 100));
      await Promise.all([store.ledger.reserve({ holdId: 'hold_voided', keyId: owner.keyId, amount: 10, leaseMs: HOUR }), store.ledger.void('hold_voided')]);
      await Promise.all([store.ledger.reserve({ holdId: 'hold_reaped', keyId: owner.keyId, amount: 10, leaseMs: 0 }), store.ledger.reapExpiredHolds(10)]);
      await Promise.all([
        store.ledger.reserve({ holdId: 'hold_settled', keyId: owner.keyId, amount: 10, leaseMs: HOUR }),
        store.ledger.settle({ holdId: 'hold_settled', amount: 4, usage: usage() }),
      ]);
      expect(ledger.reservedHere.size).toBe(0);
      expect(await store.ledger.balance(owner.accountId, owner.environment)).toMatchObject({ purchased: 96, reserved: 0 });
    });

    it('forgets the facts of a hold it voids or reaps', async () => {
      const ledger = store.ledger as SqliteLedgerStore;
      const owner = await seedAccount(store);
      await store.ledger.grant(purchased(owner, 100));
      const voided = await hold(store, owner, 10);
      await hold(store, owner, 10, 60_000);
      expect(ledger.reservedHere.size).toBe(2);
      expect(await store.ledger.void(voided)).toBe(true);
      expect(ledger.reservedHere.size).toBe(1);
      clock.advance(2 * 60_000);
      expect(await store.ledger.reapExpiredHolds(10)).toBe(1);
      expect(ledger.reservedHere.size).toBe(0);
    });
  });

  describe('the reaper with a due hold it cannot void (stuck-hold.case.ts)', () => {
    const context = (): StuckHoldContext => ({
      store,
      clock,
      fillGrants: async (accountId) => void raw.run('UPDATE credit_grants SET remaining = amount WHERE account_id = ?', accountId),
      repairGrants: async (accountId, by) => void raw.run('UPDATE credit_grants SET remaining = remaining - ? WHERE account_id = ?', by, accountId),
      holdStatuses: async () => raw.all<{ id: string; status: string }>('SELECT id, status FROM holds ORDER BY id'),
    });
    it('voids every due hold it can, names the stuck one on every pass, and voids it once repaired', () => voidsPastAStuckHold(context()));
    it('voids a due hold behind a whole page of holds it cannot void', () => voidsPastAPageOfStuckHolds(context()));
  });

  it('sees writes made by another connection to the same file (CLI next to the server)', async () => {
    const cli = createSqliteStore({ path, clock });
    try {
      await cli.migrate();
      const owner = await seedAccount(cli);
      await cli.ledger.grant(purchased(owner, 10));
      expect((await store.ledger.reserve({ holdId: 'from_server', keyId: owner.keyId, amount: 10, leaseMs: HOUR })).ok).toBe(true);
      await cli.keys.revokeKey(owner.keyId);
      expect(await store.ledger.reserve({ holdId: 'after_revoke', keyId: owner.keyId, amount: 1, leaseMs: HOUR })).toEqual({
        ok: false,
        reason: 'key_inactive',
      });
      expect(await cli.ledger.countPendingHolds(owner.accountId)).toBe(1);
    } finally {
      await cli.close();
    }
  });

  it('runs in memory and closes idempotently', async () => {
    const memory = createSqliteStore({ path: ':memory:', clock });
    await memory.migrate();
    const owner = await seedAccount(memory);
    await memory.ledger.grant(purchased(owner, 3));
    expect((await memory.ledger.balance(owner.accountId, 'live')).purchased).toBe(3);
    await memory.close();
    await memory.close();
  });
});

describe('ledger audit (SQLite)', () => {
  it('is clean after real traffic and names a grant whose remaining was tampered with', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const Database = (await import('libsql')).default;
    const { ManualClock } = await import('../../src/core/clock.js');
    const { createSqliteStore } = await import('../../src/store/sqlite/sqlite-store.js');
    const dir = mkdtempSync(join(tmpdir(), 'svc-audit-'));
    const path = join(dir, 'a.db');
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 12));
    const store = createSqliteStore({ path, clock });
    try {
      await store.migrate();
      await store.keys.createAccount({ id: 'acct_a', name: null });
      await store.keys.insertKey({
        id: 'key_a', accountId: 'acct_a', environment: 'live', name: null, salt: 's', secretHash: 'h', redacted: 'r', dailyCreditLimit: 500,
      });
      await store.ledger.grant({ accountId: 'acct_a', environment: 'live', kind: 'purchased', amount: 1000, expiresAt: null, idempotencyKey: null });
      await store.ledger.grant({ accountId: 'acct_a', environment: 'live', kind: 'earned', amount: 50, expiresAt: clock.now() + 1000, idempotencyKey: null });
      const use = { requestId: 'r', model: 'svc-fast', routedModel: 'p/m', routedProvider: 'p', promptTokens: 1, completionTokens: 1, outcome: 'completed', latencyMs: 1, shortfallCredits: 0 };
      for (let i = 0; i < 20; i++) {
        await store.ledger.reserve({ holdId: `h${i}`, keyId: 'key_a', amount: 20, leaseMs: 10 });
        if (i % 3 === 0) await store.ledger.settle({ holdId: `h${i}`, amount: 7, usage: use });
        else if (i % 3 === 1) await store.ledger.void(`h${i}`);
      }
      clock.advance(5000);
      await store.ledger.reapExpiredHolds(100);
      expect(await store.ledger.audit()).toEqual({ checks: 5, findings: [] });

      const raw = new Database(path);
      raw.prepare("UPDATE credit_grants SET remaining = remaining + 5 WHERE kind = 'purchased'").run();
      raw.close();
      const { findings } = await store.ledger.audit();
      expect(findings.map((f) => f.check)).toEqual(['grant_remaining']);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
