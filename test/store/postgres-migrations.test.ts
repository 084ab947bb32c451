import type postgres from 'postgres';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { openPool } from '../../src/store/postgres/database.js';
import { migrate, migrations } from '../../src/store/postgres/migrations.js';
import type { Store } from '../../src/store/types.js';
import { HOUR, T0, earned, hold, purchased, seedAccount, usage } from './cases/harness.js';
import { POSTGRES_URL, closeAdmin, createTestSchema, dropTestSchema, openPostgresStore, rawSql } from './postgres-harness.js';

afterAll(closeAdmin);

/** Upgrading a schema that already has traffic, not just an empty one. */
describe('postgres migration 2 (journal_expire) on a version 1 schema', () => {
  let schema: string;
  let clock: ManualClock;
  let store: Store;
  let raw: postgres.Sql;

  beforeEach(async () => {
    schema = await createTestSchema();
    clock = new ManualClock(T0);
    const sql = openPool(POSTGRES_URL, { schema, max: 1 });
    try {
      expect(await migrate(sql, clock, schema, migrations.slice(0, 1))).toEqual([1]);
    } finally {
      await sql.end();
    }
    // The store works on the version 1 tables for everything but expiry, so it writes the traffic.
    store = openPostgresStore(schema, clock);
    raw = await rawSql(schema);
  });

  afterEach(async () => {
    await raw.end();
    await store.close();
    await dropTestSchema(schema);
  });

  it('keeps every journal row and trigger, and its CHECKs admit expire entries without a hold only', async () => {
    const owner = await seedAccount(store);
    await store.ledger.grant(earned(owner, 10, T0 + HOUR));
    await store.ledger.grant(purchased(owner, 20));
    const settled = await hold(store, owner, 12, 2 * HOUR);
    await store.ledger.settle({ holdId: settled, amount: 5, usage: usage() });
    await store.ledger.void(await hold(store, owner, 3, 2 * HOUR));
    await hold(store, owner, 4, 2 * HOUR);
    const journal = () => raw`SELECT * FROM ledger_entries ORDER BY id`;
    const before = await journal();
    expect(before.length).toBeGreaterThan(5);

    await store.migrate();
    expect(await raw`SELECT version, name FROM schema_migrations ORDER BY version`).toEqual(
      migrations.map(({ version, name }) => ({ version, name })),
    );
    expect(await journal()).toEqual(before);
    expect(
      await raw`SELECT conname, pg_get_constraintdef(oid) AS def FROM pg_constraint
                WHERE conrelid = 'ledger_entries'::regclass AND conname IN ('ledger_entries_kind_check', 'ledger_entries_check')
                ORDER BY conname`,
    ).toEqual([
      { conname: 'ledger_entries_check', def: "CHECK (((kind = ANY (ARRAY['grant'::text, 'expire'::text])) = (hold_id IS NULL))) NOT VALID" },
      {
        conname: 'ledger_entries_kind_check',
        def: "CHECK ((kind = ANY (ARRAY['grant'::text, 'reserve'::text, 'settle'::text, 'release'::text, 'void'::text, 'expire'::text]))) NOT VALID",
      },
    ]);
    await expect(raw`UPDATE ledger_entries SET amount = 1`).rejects.toThrow(/append-only/);
    await expect(raw`DELETE FROM ledger_entries`).rejects.toThrow(/append-only/);
    await expect(raw`TRUNCATE ledger_entries`).rejects.toThrow(/append-only/);

    const insert = (kind: string, holdId: string | null) =>
      raw`INSERT INTO ledger_entries (account_id, environment, kind, amount, grant_id, hold_id, created_at)
          VALUES (${owner.accountId}, 'live', ${kind}, 1, (SELECT MIN(id) FROM credit_grants), ${holdId}, 0)`;
    await expect(insert('bogus', settled)).rejects.toMatchObject({ constraint_name: 'ledger_entries_kind_check' });
    await expect(insert('expire', settled)).rejects.toMatchObject({ constraint_name: 'ledger_entries_check' });
    await expect(insert('reserve', null)).rejects.toMatchObject({ constraint_name: 'ledger_entries_check' });

    clock.set(T0 + 3 * HOUR);
    expect(await store.ledger.reapExpiredHolds(10)).toBe(1);
    // 10 earned, 5 of them spent by the settled hold (drawn first); the rest came back and expired, the
    // pending hold's 4 in the same reap.
    expect(await raw`SELECT amount::int AS amount, hold_id FROM ledger_entries WHERE kind = 'expire'`).toEqual([
      { amount: 5, hold_id: null },
    ]);
    expect(await store.ledger.audit()).toEqual({ checks: 5, findings: [] });
  });
});
