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

/** A fresh schema migrated to just before `version`, a store on it (not yet migrated on) and a raw connection. */
async function openBefore(version: number): Promise<{ schema: string; store: Store; raw: postgres.Sql }> {
  const schema = await createTestSchema();
  const clock = new ManualClock(T0);
  const sql = openPool(POSTGRES_URL, { schema, max: 1 });
  try {
    const before = migrations.filter((migration) => migration.version < version);
    expect(await migrate(sql, clock, schema, before)).toEqual(before.map((migration) => migration.version));
  } finally {
    await sql.end();
  }
  return { schema, store: openPostgresStore(schema, clock), raw: await rawSql(schema) };
}

async function closeAll(opened: { schema: string; store: Store; raw: postgres.Sql }): Promise<void> {
  await opened.raw.end();
  await opened.store.close();
  await dropTestSchema(opened.schema);
}

describe('postgres migration 2 (journal_expire) on a schema without it', () => {
  let schema: string;
  let clock: ManualClock;
  let store: Store;
  let raw: postgres.Sql;

  beforeEach(async () => {
    schema = await createTestSchema();
    clock = new ManualClock(T0);
    const sql = openPool(POSTGRES_URL, { schema, max: 1 });
    try {
      // Version 3 too, which the store's settle needs (usage_events.shortfall_credits) and which touches
      // nothing version 2 does.
      expect(await migrate(sql, clock, schema, migrations.filter((migration) => migration.version !== 2))).toEqual(
        migrations.map((migration) => migration.version).filter((version) => version !== 2),
      );
    } finally {
      await sql.end();
    }
    // The store works on these tables for everything but expiry, so it writes the traffic.
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

describe('postgres migration 3 (usage_shortfall_idempotency) on a version 2 schema', () => {
  let schema: string;
  let clock: ManualClock;
  let store: Store;
  let raw: postgres.Sql;

  beforeEach(async () => {
    schema = await createTestSchema();
    clock = new ManualClock(T0);
    const sql = openPool(POSTGRES_URL, { schema, max: 1 });
    try {
      // Every version but 3: the later ones (the keys' columns) are what the store's key reads need.
      expect(await migrate(sql, clock, schema, migrations.filter((migration) => migration.version !== 3))).toEqual(
        migrations.map((migration) => migration.version).filter((version) => version !== 3),
      );
    } finally {
      await sql.end();
    }
    store = openPostgresStore(schema, clock);
    raw = await rawSql(schema);
  });

  afterEach(async () => {
    await raw.end();
    await store.close();
    await dropTestSchema(schema);
  });

  it('gives existing usage events a shortfall of 0, checks new ones, and adds the idempotency records', async () => {
    const owner = await seedAccount(store);
    await store.ledger.grant(purchased(owner, 20));
    const held = await hold(store, owner, 12, HOUR);
    // A usage event as version 2 wrote it (the store's settle needs version 3).
    await raw`INSERT INTO usage_events (account_id, environment, key_id, hold_id, request_id, model, routed_model, routed_provider,
                prompt_tokens, completion_tokens, credits, outcome, latency_ms, day, created_at)
              VALUES (${owner.accountId}, 'live', ${owner.keyId}, ${held}, 'req_v2', 'svc-fast', 'm', 'p', 1, 2, 3, 'completed', 4,
                '2025-01-15', ${T0})`;
    await store.migrate();
    expect(await raw`SELECT version, name FROM schema_migrations ORDER BY version`).toEqual(
      migrations.map(({ version, name }) => ({ version, name })),
    );
    expect(await raw`SELECT request_id, shortfall_credits::int AS shortfall_credits FROM usage_events`).toEqual([
      { request_id: 'req_v2', shortfall_credits: 0 },
    ]);
    expect(
      // Scoped to this schema: test files running in parallel have the same constraint in theirs.
      await raw`SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint
                WHERE conname = 'usage_events_shortfall_credits_check' AND connamespace = ${schema}::regnamespace`,
    ).toEqual([{ def: 'CHECK ((shortfall_credits >= 0)) NOT VALID' }]);
    await expect(raw`UPDATE usage_events SET shortfall_credits = -1`).rejects.toMatchObject({
      constraint_name: 'usage_events_shortfall_credits_check',
    });

    const settled = await hold(store, owner, 5, HOUR);
    await store.ledger.settle({ holdId: settled, amount: 5, usage: usage({ requestId: 'req_v3', shortfallCredits: 17 }) });
    expect(await raw`SELECT shortfall_credits::int AS shortfall_credits FROM usage_events WHERE request_id = 'req_v3'`).toEqual([
      { shortfall_credits: 17 },
    ]);
    expect(
      await raw`SELECT indexname FROM pg_indexes WHERE tablename = 'idempotency_records' AND schemaname = ${schema} ORDER BY indexname`,
    ).toEqual([
      { indexname: 'idempotency_records_by_expiry' },
      { indexname: 'idempotency_records_pkey' },
    ]);
  });
});

describe('postgres migration 7 (stored_responses) on a version 6 schema', () => {
  let schema: string;
  let store: Store;
  let raw: postgres.Sql;

  beforeEach(async () => {
    ({ schema, store, raw } = await openBefore(7));
  });

  afterEach(() => closeAll({ schema, store, raw }));

  it('adds the table with its expiry index, its foreign key and CHECK, and leaves the books alone', async () => {
    const owner = await seedAccount(store);
    await store.ledger.grant(purchased(owner, 20));
    await store.ledger.settle({ holdId: await hold(store, owner, 5, HOUR), amount: 5, usage: usage() });
    await store.migrate();
    expect(await raw`SELECT version, name FROM schema_migrations ORDER BY version`).toEqual(
      migrations.map(({ version, name }) => ({ version, name })),
    );
    expect(
      await raw`SELECT indexname FROM pg_indexes WHERE tablename = 'stored_responses' AND schemaname = ${schema} ORDER BY indexname`,
    ).toEqual([{ indexname: 'stored_responses_by_expiry' }, { indexname: 'stored_responses_pkey' }]);
    const insert = (accountId: string, environment: string) =>
      raw`INSERT INTO stored_responses (id, account_id, environment, key_id, created_at, expires_at, conversation, output, body)
          VALUES (${`resp_${accountId}_${environment}`}, ${accountId}, ${environment}, 'key_x', 0, 1, '[]', '[]', '{}')`;
    await expect(insert('acct_unknown', 'live')).rejects.toMatchObject({ constraint_name: 'stored_responses_account_id_fkey' });
    await expect(insert(owner.accountId, 'staging')).rejects.toMatchObject({ constraint_name: 'stored_responses_environment_check' });
    expect((await insert(owner.accountId, 'test')).count).toBe(1);
    expect(await store.ledger.audit()).toEqual({ checks: 5, findings: [] });
  });
});

describe('postgres migration 8 (usage_events_by_time) on a version 7 schema', () => {
  let schema: string;
  let store: Store;
  let raw: postgres.Sql;

  beforeEach(async () => {
    ({ schema, store, raw } = await openBefore(8));
  });

  afterEach(() => closeAll({ schema, store, raw }));

  const indexes = () =>
    raw`SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'usage_events' AND schemaname = ${schema} ORDER BY indexname`;

  it('indexes the events already recorded, which the export then reads, and leaves the books alone', async () => {
    const owner = await seedAccount(store);
    await store.ledger.grant(purchased(owner, 20));
    await store.ledger.settle({ holdId: await hold(store, owner, 5, HOUR), amount: 5, usage: usage({ requestId: 'req_v7' }) });
    await store.migrate();
    expect(await raw`SELECT version, name FROM schema_migrations ORDER BY version`).toEqual(
      migrations.map(({ version, name }) => ({ version, name })),
    );
    expect((await indexes()).map((row) => row.indexname)).toEqual([
      'usage_events_by_time',
      'usage_events_hold_id_key',
      'usage_events_pkey',
    ]);
    expect((await indexes()).find((row) => row.indexname === 'usage_events_by_time')?.indexdef).toMatch(/\(created_at, id\)$/);
    const page = await store.usage.events({ startMs: T0, endMs: T0 + 1, accountId: null, environment: null, after: null, limit: 10 });
    expect(page).toEqual([expect.objectContaining({ requestId: 'req_v7', accountId: owner.accountId, credits: 5, at: T0 })]);
    expect(await store.ledger.audit()).toEqual({ checks: 5, findings: [] });
  });

  it('keeps the index an operator built CONCURRENTLY beforehand', async () => {
    const oid = async () =>
      (await raw<{ oid: string | null }[]>`SELECT to_regclass(${`${schema}.usage_events_by_time`})::oid::text AS oid`)[0]?.oid;
    await raw.unsafe('CREATE INDEX CONCURRENTLY usage_events_by_time ON usage_events (created_at, id)');
    const before = await oid();
    expect(before).toMatch(/^\d+$/);
    await store.migrate();
    expect(await oid()).toBe(before);
    expect(await raw`SELECT max(version) AS version FROM schema_migrations`).toEqual([{ version: migrations.at(-1)?.version }]);
  });
});

describe('postgres migration 9 (drop_unread_indexes) on a version 8 schema', () => {
  let schema: string;
  let store: Store;
  let raw: postgres.Sql;

  beforeEach(async () => {
    ({ schema, store, raw } = await openBefore(9));
  });

  afterEach(() => closeAll({ schema, store, raw }));

  const unread = async () =>
    (
      await raw<{ indexname: string }[]>`SELECT indexname FROM pg_indexes WHERE schemaname = ${schema}
        AND indexname IN ('ledger_entries_by_grant', 'ledger_entries_by_hold', 'usage_events_by_owner_day') ORDER BY indexname`
    ).map((row) => row.indexname);

  it('drops the three indexes and leaves the books and the audit as they were', async () => {
    const owner = await seedAccount(store);
    await store.ledger.grant(purchased(owner, 20));
    await store.ledger.settle({ holdId: await hold(store, owner, 5, HOUR), amount: 3, usage: usage() });
    await store.ledger.void(await hold(store, owner, 4, HOUR));
    expect(await unread()).toHaveLength(3);
    const books = async () => ({
      journal: await raw`SELECT * FROM ledger_entries ORDER BY id`,
      events: await raw`SELECT * FROM usage_events ORDER BY id`,
    });
    const before = await books();

    await store.migrate();
    expect(await raw`SELECT version, name FROM schema_migrations ORDER BY version`).toEqual(
      migrations.map(({ version, name }) => ({ version, name })),
    );
    expect(await unread()).toEqual([]);
    expect(await books()).toEqual(before);
    expect(await store.ledger.audit()).toEqual({ checks: 5, findings: [] });
  });
});
