import type postgres from 'postgres';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { openStore } from '../../src/runtime/node/open-store.js';
import { openPool } from '../../src/store/postgres/database.js';
import { migrate, migrations } from '../../src/store/postgres/migrations.js';
import { createPostgresStore } from '../../src/store/postgres/postgres-store.js';
import { ReapIncomplete } from '../../src/store/reap-isolated.js';
import type { Store } from '../../src/store/types.js';
import { HOUR, T0, earned, hold, purchased, seedAccount, usage } from './cases/harness.js';
import { type StuckHoldContext, voidsPastAPageOfStuckHolds, voidsPastAStuckHold } from './cases/stuck-hold.case.js';
import {
  POSTGRES_URL,
  closeAdmin,
  createTestSchema,
  dropTestSchema,
  freshSchemaName,
  openPostgresStore,
  rawSql,
} from './postgres-harness.js';

afterAll(closeAdmin);

/** What only PostgreSQL has: the migration lock, CHECK and trigger backstops, connection failures. */
describe('postgres store specifics', () => {
  let schema: string;
  let clock: ManualClock;
  let store: Store;
  let raw: postgres.Sql;

  beforeEach(async () => {
    schema = await createTestSchema();
    clock = new ManualClock(T0);
    store = openPostgresStore(schema, clock);
    await store.migrate();
    raw = await rawSql(schema);
  });

  afterEach(async () => {
    await raw.end();
    await store.close();
    await dropTestSchema(schema);
  });

  it('records each migration once', async () => {
    await store.migrate();
    const rows = await raw<{ version: number; name: string }[]>`SELECT version, name FROM schema_migrations ORDER BY version`;
    expect(rows).toEqual(migrations.map(({ version, name }) => ({ version, name })));
  });

  it('installs the ledger functions only when their definitions changed', async () => {
    const installed = () =>
      raw<{ proname: string; version: string; comment: string | null }[]>`
        SELECT proname, xmin::text AS version, obj_description(oid, 'pg_proc') AS comment FROM pg_proc
        WHERE pronamespace = ${schema}::regnamespace AND proname LIKE 'svc\_%' ORDER BY proname`;
    const first = await installed();
    expect(first.map((f) => f.proname)).toEqual(['svc_balance_v1', 'svc_key_chain_v1', 'svc_reserve_v2', 'svc_settle_v3']);
    expect(first.find((f) => f.proname === 'svc_settle_v3')?.comment).toMatch(/^sha256:[0-9a-f]{64}$/);
    // A second start writes nothing: the catalog rows are the same row versions.
    await store.migrate();
    expect(await installed()).toEqual(first);
    // Installed definitions that differ from this release's (here: their recorded hash) are replaced.
    await raw.unsafe(`COMMENT ON FUNCTION svc_settle_v3(text, bigint, text, text, text, text, bigint, bigint, text, bigint, bigint, text, bigint, bigint, bigint) IS 'sha256:older'`);
    await store.migrate();
    const again = await installed();
    expect(again.map((f) => f.comment)).toEqual(first.map((f) => f.comment));
    expect(again.map((f) => f.version)).not.toEqual(first.map((f) => f.version));
  });

  it('applies only the migrations not yet applied and refuses unknown or renamed ones', async () => {
    const sql = openPool(POSTGRES_URL, { schema, max: 1 });
    try {
      const extra = { version: 999, name: 'extra', sql: 'CREATE TABLE extra_table (id INTEGER PRIMARY KEY);' };
      expect(await migrate(sql, clock, schema, [...migrations, extra])).toEqual([999]);
      expect(await migrate(sql, clock, schema, [...migrations, extra])).toEqual([]);
      await expect(migrate(sql, clock, schema, migrations)).rejects.toThrow(/does not know/);
      const renamed = [...migrations, { ...extra, name: 'extra_edited' }];
      await expect(migrate(sql, clock, schema, renamed)).rejects.toThrow(/named/);
    } finally {
      await sql.end();
    }
  });

  it('keeps CHECK constraints as a backstop against negative balances', async () => {
    const owner = await seedAccount(store);
    await store.ledger.grant(purchased(owner, 10));
    await expect(raw`UPDATE credit_grants SET remaining = -1`).rejects.toThrow(/check constraint/);
    await expect(raw`UPDATE credit_grants SET remaining = amount + 1`).rejects.toThrow(/check constraint/);
    await expect(raw`UPDATE credit_grants SET expires_at = NULL, kind = 'earned'`).rejects.toThrow(/check constraint/);
    await expect(raw`UPDATE key_daily_usage SET committed = -1`).resolves.toHaveLength(0);
    await hold(store, owner, 4);
    await expect(raw`UPDATE key_daily_usage SET committed = -1`).rejects.toThrow(/check constraint/);
  });

  it('keeps ledger_entries append-only, TRUNCATE included', async () => {
    const owner = await seedAccount(store);
    await store.ledger.grant(purchased(owner, 10));
    await expect(raw`UPDATE ledger_entries SET amount = 1`).rejects.toThrow(/append-only/);
    await expect(raw`DELETE FROM ledger_entries`).rejects.toThrow(/append-only/);
    await expect(raw`TRUNCATE ledger_entries`).rejects.toThrow(/append-only/);
  });

  it('audits clean after traffic and names a grant whose remaining was tampered with', async () => {
    const owner = await seedAccount(store, { dailyCreditLimit: 500 });
    await store.ledger.grant(earned(owner, 30, T0 + HOUR));
    await store.ledger.grant(purchased(owner, 200));
    for (let i = 0; i < 12; i++) {
      const holdId = await hold(store, owner, 15, 10);
      if (i % 3 === 0) await store.ledger.settle({ holdId, amount: 7, usage: usage() });
      else if (i % 3 === 1) await store.ledger.void(holdId);
    }
    clock.advance(2 * HOUR);
    expect(await store.ledger.reapExpiredHolds(100)).toBe(4);
    expect(await store.ledger.audit()).toEqual({ checks: 5, findings: [] });
    await raw`UPDATE credit_grants SET remaining = remaining + 5 WHERE kind = 'purchased'`;
    expect((await store.ledger.audit()).findings.map((finding) => finding.check)).toEqual(['grant_remaining']);
  });

  describe('the reaper with a due hold it cannot void (stuck-hold.case.ts)', () => {
    const context = (): StuckHoldContext => ({
      store,
      clock,
      fillGrants: async (accountId) => void (await raw`UPDATE credit_grants SET remaining = amount WHERE account_id = ${accountId}`),
      repairGrants: async (accountId, by) => void (await raw`UPDATE credit_grants SET remaining = remaining - ${by} WHERE account_id = ${accountId}`),
      holdStatuses: async () => [...(await raw<{ id: string; status: string }[]>`SELECT id, status FROM holds ORDER BY id`)],
    });
    it('voids every due hold it can, names the stuck one on every pass, and voids it once repaired', () => voidsPastAStuckHold(context()));
    it('voids a due hold behind a whole page of holds it cannot void', () => voidsPastAPageOfStuckHolds(context()));
  });

  it("voids the other due holds when one's grant is held past the operator's lock_timeout, and names that one", async () => {
    // An operator's lock_timeout (a connection parameter here; ALTER ROLE ... SET does the same).
    const timed = createPostgresStore({ url: `${POSTGRES_URL}?lock_timeout=300`, clock, schema, max: 4 });
    try {
      const blocked = await seedAccount(timed);
      const healthy = await seedAccount(timed);
      await timed.ledger.grant(purchased(blocked, 100));
      await timed.ledger.grant(purchased(healthy, 100));
      const waiting = await hold(timed, blocked, 10, 1_000);
      const orphan = await hold(timed, healthy, 10, 2_000);
      clock.advance(HOUR);
      let outcome: unknown;
      await raw.begin(async (tx) => {
        // A long transaction holds the blocked account's grant (an operator's edit, a stuck session).
        await tx`SELECT id FROM credit_grants WHERE account_id = ${blocked.accountId} FOR UPDATE`;
        outcome = await timed.ledger.reapExpiredHolds(100).then(
          () => null,
          (e: unknown) => e,
        );
      });
      // A timeout is that hold's failure, not the database away: the pass goes on past it.
      expect(outcome).toBeInstanceOf(ReapIncomplete);
      expect(outcome).toMatchObject({ voided: 1, failedHolds: [{ holdId: waiting, error: expect.stringMatching(/lock timeout/) }] });
      expect(await raw<{ id: string; status: string }[]>`SELECT id, status FROM holds WHERE id = ${orphan}`).toEqual([{ id: orphan, status: 'voided' }]);
      // The lock gone, the next pass voids it.
      expect(await timed.ledger.reapExpiredHolds(100)).toBe(1);
      expect((await timed.ledger.audit()).findings).toEqual([]);
    } finally {
      await timed.close();
    }
  });

  it('answers unavailable, to be retried, for a void PostgreSQL cancelled while it waited for a lock, and the retry voids it', async () => {
    const owner = await seedAccount(store);
    await store.ledger.grant(purchased(owner, 100));
    const holdId = await hold(store, owner, 10);
    let voiding: Promise<boolean> | undefined;
    await raw.begin(async (tx) => {
      // Another transaction holds the hold's row, as a settle on another instance would.
      await tx`SELECT id FROM holds WHERE id = ${holdId} FOR UPDATE`;
      const [self] = await tx<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
      voiding = store.ledger.void(holdId);
      voiding.catch(() => undefined);
      for (let i = 0; ; i++) {
        const [waiting] = await raw<{ pid: number }[]>`SELECT pid FROM pg_stat_activity WHERE ${self?.pid ?? -1}::int = ANY(pg_blocking_pids(pid))`;
        if (waiting !== undefined) {
          // What statement_timeout or an operator's pg_cancel_backend does: SQLSTATE 57014.
          await raw`SELECT pg_cancel_backend(${waiting.pid}::int)`;
          break;
        }
        if (i > 200) throw new Error('the void never waited for the lock');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    });
    await expect(voiding).rejects.toMatchObject({ name: 'StoreError', code: 'unavailable' });
    expect(await store.ledger.countPendingHolds(owner.accountId)).toBe(1);
    expect(await store.ledger.void(holdId)).toBe(true);
    expect(await store.ledger.balance(owner.accountId, owner.environment)).toMatchObject({ purchased: 100, reserved: 0 });
    expect((await store.ledger.audit()).findings).toEqual([]);
  });

  it('refuses a reserve whose credits are spent while it waits for the grant locks, and leaves no trace', async () => {
    const owner = await seedAccount(store, { dailyCreditLimit: 100 });
    await store.ledger.grant(purchased(owner, 10));
    let settled = false;
    let pending: ReturnType<Store['ledger']['reserve']> | undefined;
    await raw.begin(async (tx) => {
      // Another transaction holds the account's grants, as a concurrent reserve would.
      await tx`SELECT id FROM credit_grants WHERE account_id = ${owner.accountId} FOR NO KEY UPDATE`;
      const [self] = await tx<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
      pending = store.ledger.reserve({ holdId: 'raced', keyId: owner.keyId, amount: 8, leaseMs: HOUR });
      const done = () => (settled = true);
      pending.then(done, done);
      // The reserve passed its unlocked check (10 available), charged the day and now waits for the grants.
      for (let i = 0; ; i++) {
        const [waiting] = await raw`SELECT count(*)::int AS n FROM pg_stat_activity
                                    WHERE ${self?.pid ?? -1}::int = ANY(pg_blocking_pids(pid)) AND query LIKE '%svc_reserve_v2%'`;
        if (waiting?.n === 1) break;
        if (i > 200) throw new Error('the reserve never waited for the grant locks');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(settled).toBe(false);
      await tx`UPDATE credit_grants SET remaining = 3 WHERE account_id = ${owner.accountId}`;
    });
    expect(await pending).toEqual({ ok: false, reason: 'insufficient_credits', available: 3 });
    // The statement's error rolled back the day's charge with everything else.
    expect(await raw`SELECT committed FROM key_daily_usage WHERE key_id = ${owner.keyId}`).toEqual([]);
    expect(await raw`SELECT id FROM holds`).toEqual([]);
    expect(await raw`SELECT kind FROM ledger_entries WHERE hold_id IS NOT NULL`).toEqual([]);
    expect(await hold(store, owner, 3)).toBeTruthy();
  });

  it('renews and settles a hold through its primary key, not by walking the index of pending holds', async () => {
    // With a plain status guard on their UPDATEs, renewal and settle let the planner pick holds_pending_by_lease
    // (its third column is the id) on a table autovacuum had not analyzed yet: a walk over every entry on every
    // call, which grew with the table. Index scans are counted per index; a backend reports them as it exits.
    const owner = await seedAccount(store);
    await store.ledger.grant(purchased(owner, 10_000));
    for (let i = 0; i < 50; i++) {
      const holdId = await hold(store, owner, 5, HOUR);
      expect(await store.ledger.renewHold(holdId, 2 * HOUR)).toBe(true);
      await store.ledger.settle({ holdId, amount: 3, usage: usage() });
      expect(await store.ledger.renewHold(holdId, 2 * HOUR)).toBe(false);
    }
    await store.close();
    const scansOf = async (index: string) =>
      (await raw<{ n: number }[]>`
        SELECT idx_scan::int AS n FROM pg_stat_user_indexes WHERE schemaname = ${schema} AND indexrelname = ${index}`)[0]?.n ?? 0;
    // The closed pool's backends report as they exit, a moment after their sockets close: each settle reads
    // its hold by primary key at least twice (its lock, the journal's foreign key) and each renewal once, so
    // 200 means all reported.
    for (let waited = 0; (await scansOf('holds_pkey')) < 200 && waited < 5_000; waited += 50) await new Promise((r) => setTimeout(r, 50));
    expect(await scansOf('holds_pkey')).toBeGreaterThanOrEqual(200);
    expect(await scansOf('holds_pending_by_lease')).toBe(0);
    store = openPostgresStore(schema, clock);
  });

  it('sees a revocation made through another instance on the next reserve', async () => {
    const other = openPostgresStore(schema, clock);
    try {
      const owner = await seedAccount(other);
      await other.ledger.grant(purchased(owner, 10));
      expect((await store.ledger.reserve({ holdId: 'from_a', keyId: owner.keyId, amount: 5, leaseMs: HOUR })).ok).toBe(true);
      await other.keys.revokeKey(owner.keyId);
      expect(await store.ledger.reserve({ holdId: 'after_revoke', keyId: owner.keyId, amount: 1, leaseMs: HOUR })).toEqual({
        ok: false,
        reason: 'key_inactive',
      });
    } finally {
      await other.close();
    }
  });
});

describe('postgres migrations under concurrent starts', () => {
  it('three instances migrating a schema that does not exist yet apply each migration once', async () => {
    const schema = freshSchemaName();
    const clock = new ManualClock(T0);
    const stores = [0, 1, 2].map(() => openPostgresStore(schema, clock, 2));
    try {
      await Promise.all(stores.map((store) => store.migrate()));
      const raw = await rawSql(schema);
      try {
        const rows = await raw<{ version: number; name: string }[]>`SELECT version, name FROM schema_migrations ORDER BY version`;
        expect(rows).toEqual(migrations.map(({ version, name }) => ({ version, name })));
      } finally {
        await raw.end();
      }
      // Every instance works on the migrated schema.
      const owner = await seedAccount(stores[0]!);
      await stores[1]!.ledger.grant(purchased(owner, 5));
      expect((await stores[2]!.ledger.balance(owner.accountId, 'live')).purchased).toBe(5);
    } finally {
      await Promise.all(stores.map((store) => store.close()));
      await dropTestSchema(schema);
    }
  });
});

describe('postgres connection handling', () => {
  it('reports an unreachable server as StoreError unavailable', async () => {
    const store = createPostgresStore({ url: 'postgres://postgres@127.0.0.1:1/test', clock: new ManualClock(T0) });
    try {
      await expect(store.ledger.balance('acct_x', 'live')).rejects.toMatchObject({ name: 'StoreError', code: 'unavailable' });
      await expect(store.migrate()).rejects.toMatchObject({ code: 'unavailable' });
    } finally {
      await store.close();
    }
  });

  it('refuses a schema name that is not a plain identifier, and closes idempotently', async () => {
    expect(() => createPostgresStore({ url: POSTGRES_URL, clock: new ManualClock(T0), schema: 'x"; DROP' })).toThrow(/schema/);
    expect(() => createPostgresStore({ url: POSTGRES_URL, clock: new ManualClock(T0), max: 0 })).toThrow(/pool size/);
    const store = createPostgresStore({ url: POSTGRES_URL, clock: new ManualClock(T0) });
    await store.close();
    await store.close();
    await expect(store.keys.countAccounts()).rejects.toMatchObject({ code: 'unavailable' });
  });
});

describe('SVC_DATABASE_URL=postgres://...', () => {
  it('opens and migrates the PostgreSQL store, with our max and schema options taken out of the URL', async () => {
    const schema = freshSchemaName();
    const store = await openStore(`${POSTGRES_URL}?max=2&schema=${schema}&application_name=svc-test`, new ManualClock(T0));
    try {
      const owner = await seedAccount(store);
      await store.ledger.grant(purchased(owner, 3));
      expect((await store.ledger.balance(owner.accountId, 'live')).purchased).toBe(3);
    } finally {
      await store.close();
      await dropTestSchema(schema);
    }
  });

  it('rejects a bad pool size or schema as a configuration error', async () => {
    await expect(openStore(`${POSTGRES_URL}?max=0`, new ManualClock(T0))).rejects.toMatchObject({ name: 'ConfigError' });
    await expect(openStore(`${POSTGRES_URL}?schema=Bad-Name`, new ManualClock(T0))).rejects.toThrow(/schema/);
  });
});
