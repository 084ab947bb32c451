import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { SqliteConnection, openSqliteDatabase } from '../../src/store/sqlite/database.js';
import { migrate, migrations } from '../../src/store/sqlite/migrations.js';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/types.js';
import { HOUR, T0, earned, hold, purchased, seedAccount, usage } from './cases/harness.js';

/** Upgrading a database that already has traffic, not just an empty one. */

/** A database migrated to just before `version`, a raw connection to it, and a store on it (not yet migrated on). */
async function openBefore(version: number): Promise<{ dir: string; raw: SqliteConnection; store: Store }> {
  const dir = await mkdtemp(join(tmpdir(), `svc-gateway-sqlite-v${version - 1}-`));
  const path = join(dir, 'gateway.db');
  const clock = new ManualClock(T0);
  const raw = new SqliteConnection(openSqliteDatabase(path));
  const before = migrations.filter((migration) => migration.version < version);
  expect(migrate(raw, clock, before)).toEqual(before.map((migration) => migration.version));
  return { dir, raw, store: createSqliteStore({ path, clock }) };
}

async function closeAll(opened: { dir: string; raw: SqliteConnection; store: Store }): Promise<void> {
  opened.raw.close();
  await opened.store.close();
  await rm(opened.dir, { recursive: true, force: true });
}

describe('sqlite migration 2 (journal_expire) on a database without it', () => {
  let dir: string;
  let clock: ManualClock;
  let raw: SqliteConnection;
  let store: Store;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-gateway-sqlite-v1-'));
    const path = join(dir, 'gateway.db');
    clock = new ManualClock(T0);
    raw = new SqliteConnection(openSqliteDatabase(path));
    // Version 3 too, which the store's settle needs (usage_events.shortfall_credits) and which touches
    // nothing version 2 does: the store works on these tables for everything but expiry, so it writes the traffic.
    expect(migrate(raw, clock, migrations.filter((migration) => migration.version !== 2))).toEqual(
      migrations.map((migration) => migration.version).filter((version) => version !== 2),
    );
    store = createSqliteStore({ path, clock });
  });

  afterEach(async () => {
    raw.close();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps every row and id, the AUTOINCREMENT mark, the indexes and the append-only triggers', async () => {
    const owner = await seedAccount(store);
    await store.ledger.grant(earned(owner, 10, T0 + HOUR));
    await store.ledger.grant(purchased(owner, 20));
    const settled = await hold(store, owner, 12, 2 * HOUR);
    await store.ledger.settle({ holdId: settled, amount: 5, usage: usage() });
    await store.ledger.void(await hold(store, owner, 3, 2 * HOUR));
    await hold(store, owner, 4, 2 * HOUR);
    // An id taken and rolled back is not reused: AUTOINCREMENT keeps its mark above the last row.
    raw.run(`UPDATE sqlite_sequence SET seq = seq + 5 WHERE name = 'ledger_entries'`);
    const journal = () => raw.all<Record<string, unknown>>('SELECT * FROM ledger_entries ORDER BY id');
    const sequence = () => raw.get<{ seq: number }>(`SELECT seq FROM sqlite_sequence WHERE name = 'ledger_entries'`)?.seq;
    const before = { rows: journal(), seq: sequence() };
    expect(before.rows.length).toBeGreaterThan(5);

    await store.migrate();
    expect(raw.all('SELECT version, name FROM schema_migrations ORDER BY version')).toEqual(
      migrations.map(({ version, name }) => ({ version, name })),
    );
    expect({ rows: journal(), seq: sequence() }).toEqual(before);
    expect(raw.all(`SELECT name FROM sqlite_master WHERE name LIKE '%_v2' OR tbl_name LIKE '%_v2'`)).toEqual([]);
    expect(raw.all(`SELECT type, name FROM sqlite_master WHERE tbl_name = 'ledger_entries' AND type <> 'table' ORDER BY name`)).toEqual([
      // Rebuilt by version 2, which this database gets after the later versions (a database migrated in
      // order has version 9 drop them afterwards).
      { type: 'index', name: 'ledger_entries_by_grant' },
      { type: 'index', name: 'ledger_entries_by_hold' },
      { type: 'trigger', name: 'ledger_entries_no_delete' },
      { type: 'trigger', name: 'ledger_entries_no_update' },
    ]);
    expect(raw.all('PRAGMA foreign_key_check')).toEqual([]);
    expect(raw.get<{ integrity_check: string }>('PRAGMA integrity_check')?.integrity_check).toBe('ok');
    expect(() => raw.run('UPDATE ledger_entries SET amount = 1')).toThrow(/append-only/);
    expect(() => raw.run('DELETE FROM ledger_entries')).toThrow(/append-only/);

    // The widened CHECKs: expire entries exist and belong to no hold; other kinds keep their rules.
    const insert = (kind: string, holdId: string | null) =>
      raw.run(
        `INSERT INTO ledger_entries (account_id, environment, kind, amount, grant_id, hold_id, created_at)
         VALUES (?, 'live', ?, 1, (SELECT MIN(id) FROM credit_grants), ?, 0)`,
        owner.accountId,
        kind,
        holdId,
      );
    expect(() => insert('bogus', settled)).toThrow(/CHECK constraint failed: kind IN/);
    expect(() => insert('expire', settled)).toThrow(/CHECK constraint failed: \(kind IN \('grant', 'expire'\)\)/);
    expect(() => insert('reserve', null)).toThrow(/CHECK constraint failed: \(kind IN \('grant', 'expire'\)\)/);

    clock.set(T0 + 3 * HOUR);
    expect(await store.ledger.reapExpiredHolds(10)).toBe(1);
    const expired = raw.all<{ id: number; amount: number; hold_id: string | null }>(
      `SELECT id, amount, hold_id FROM ledger_entries WHERE kind = 'expire'`,
    );
    // 10 earned, 5 of them spent by the settled hold (drawn first); the rest came back and expired, the
    // pending hold's 4 in the same reap, right after its void entry: ids go on from the carried-over mark.
    expect(expired).toEqual([{ id: Number(before.seq) + 2, amount: 5, hold_id: null }]);
    expect(await store.ledger.audit()).toEqual({ checks: 5, findings: [] });
  });
});

describe('sqlite migration 3 (usage_shortfall_idempotency) on a version 2 database', () => {
  let dir: string;
  let clock: ManualClock;
  let raw: SqliteConnection;
  let store: Store;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-gateway-sqlite-v2-'));
    const path = join(dir, 'gateway.db');
    clock = new ManualClock(T0);
    raw = new SqliteConnection(openSqliteDatabase(path));
    // Every version but 3: the later ones (the keys' columns) are what the store's key reads need.
    expect(migrate(raw, clock, migrations.filter((migration) => migration.version !== 3))).toEqual(
      migrations.map((migration) => migration.version).filter((version) => version !== 3),
    );
    store = createSqliteStore({ path, clock });
  });

  afterEach(async () => {
    raw.close();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('gives existing usage events a shortfall of 0, checks new ones, and adds the idempotency records', async () => {
    const owner = await seedAccount(store);
    await store.ledger.grant(purchased(owner, 20));
    const held = await hold(store, owner, 12, HOUR);
    // A usage event as version 2 wrote it (the store's settle needs version 3).
    raw.run(
      `INSERT INTO usage_events (account_id, environment, key_id, hold_id, request_id, model, routed_model, routed_provider,
         prompt_tokens, completion_tokens, credits, outcome, latency_ms, day, created_at)
       VALUES (?, 'live', ?, ?, 'req_v2', 'svc-fast', 'm', 'p', 1, 2, 3, 'completed', 4, '2025-01-15', ?)`,
      owner.accountId,
      owner.keyId,
      held,
      T0,
    );
    await store.migrate();
    expect(raw.all('SELECT version, name FROM schema_migrations ORDER BY version')).toEqual(
      migrations.map(({ version, name }) => ({ version, name })),
    );
    expect(raw.all('SELECT request_id, shortfall_credits FROM usage_events')).toEqual([{ request_id: 'req_v2', shortfall_credits: 0 }]);
    expect(() => raw.run(`UPDATE usage_events SET shortfall_credits = -1`)).toThrow(/CHECK constraint failed/);

    const settled = await hold(store, owner, 5, HOUR);
    await store.ledger.settle({ holdId: settled, amount: 5, usage: usage({ requestId: 'req_v3', shortfallCredits: 17 }) });
    expect(raw.all(`SELECT shortfall_credits FROM usage_events WHERE request_id = 'req_v3'`)).toEqual([{ shortfall_credits: 17 }]);
    expect(raw.all(`SELECT name FROM sqlite_master WHERE tbl_name = 'idempotency_records' ORDER BY name`)).toEqual([
      { name: 'idempotency_records' },
      { name: 'idempotency_records_by_expiry' },
      { name: 'sqlite_autoindex_idempotency_records_1' },
    ]);
    expect(raw.get<{ integrity_check: string }>('PRAGMA integrity_check')?.integrity_check).toBe('ok');
  });
});

describe('sqlite migration 7 (stored_responses) on a version 6 database', () => {
  let dir: string;
  let raw: SqliteConnection;
  let store: Store;

  beforeEach(async () => {
    ({ dir, raw, store } = await openBefore(7));
  });

  afterEach(() => closeAll({ dir, raw, store }));

  it('adds the table with its expiry index, its foreign key and CHECK, and leaves the books alone', async () => {
    const owner = await seedAccount(store);
    await store.ledger.grant(purchased(owner, 20));
    await store.ledger.settle({ holdId: await hold(store, owner, 5, HOUR), amount: 5, usage: usage() });
    await store.migrate();
    expect(raw.all('SELECT version, name FROM schema_migrations ORDER BY version')).toEqual(
      migrations.map(({ version, name }) => ({ version, name })),
    );
    expect(raw.all(`SELECT name FROM sqlite_master WHERE tbl_name = 'stored_responses' ORDER BY name`)).toEqual([
      { name: 'sqlite_autoindex_stored_responses_1' },
      { name: 'stored_responses' },
      { name: 'stored_responses_by_expiry' },
    ]);
    const insert = (accountId: string, environment: string) =>
      raw.run(
        `INSERT INTO stored_responses (id, account_id, environment, key_id, created_at, expires_at, conversation, output, body)
         VALUES (?, ?, ?, 'key_x', 0, 1, '[]', '[]', '{}')`,
        `resp_${accountId}_${environment}`,
        accountId,
        environment,
      );
    expect(() => insert('acct_unknown', 'live')).toThrow(/FOREIGN KEY constraint failed/);
    expect(() => insert(owner.accountId, 'staging')).toThrow(/CHECK constraint failed/);
    expect(insert(owner.accountId, 'test')).toBe(1);
    expect(await store.ledger.audit()).toEqual({ checks: 5, findings: [] });
    expect(raw.get<{ integrity_check: string }>('PRAGMA integrity_check')?.integrity_check).toBe('ok');
  });
});

describe('sqlite migration 8 (usage_events_by_time) on a version 7 database', () => {
  let dir: string;
  let raw: SqliteConnection;
  let store: Store;

  beforeEach(async () => {
    ({ dir, raw, store } = await openBefore(8));
  });

  afterEach(() => closeAll({ dir, raw, store }));

  it('indexes the events already recorded, which the export then reads, and leaves the books alone', async () => {
    const owner = await seedAccount(store);
    await store.ledger.grant(purchased(owner, 20));
    await store.ledger.settle({ holdId: await hold(store, owner, 5, HOUR), amount: 5, usage: usage({ requestId: 'req_v7' }) });
    await store.migrate();
    expect(raw.all('SELECT version, name FROM schema_migrations ORDER BY version')).toEqual(
      migrations.map(({ version, name }) => ({ version, name })),
    );
    expect(raw.all(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'usage_events' ORDER BY name`)).toEqual([
      { name: 'sqlite_autoindex_usage_events_1' },
      { name: 'usage_events_by_time' },
    ]);
    const page = await store.usage.events({ startMs: T0, endMs: T0 + 1, accountId: null, environment: null, after: null, limit: 10 });
    expect(page).toEqual([expect.objectContaining({ requestId: 'req_v7', accountId: owner.accountId, credits: 5, at: T0 })]);
    expect(await store.ledger.audit()).toEqual({ checks: 5, findings: [] });
    expect(raw.get<{ integrity_check: string }>('PRAGMA integrity_check')?.integrity_check).toBe('ok');
  });
});

describe('sqlite migration 9 (drop_unread_indexes) on a version 8 database', () => {
  let dir: string;
  let raw: SqliteConnection;
  let store: Store;

  beforeEach(async () => {
    ({ dir, raw, store } = await openBefore(9));
  });

  afterEach(() => closeAll({ dir, raw, store }));

  const unread = () =>
    raw.all<{ name: string }>(
      `SELECT name FROM sqlite_master WHERE type = 'index'
       AND name IN ('ledger_entries_by_grant', 'ledger_entries_by_hold', 'usage_events_by_owner_day') ORDER BY name`,
    );

  it('drops the three indexes and leaves the books, the journal rules and the audit as they were', async () => {
    const owner = await seedAccount(store);
    await store.ledger.grant(purchased(owner, 20));
    await store.ledger.settle({ holdId: await hold(store, owner, 5, HOUR), amount: 3, usage: usage() });
    await store.ledger.void(await hold(store, owner, 4, HOUR));
    expect(unread()).toHaveLength(3);
    const books = () => ({
      journal: raw.all('SELECT * FROM ledger_entries ORDER BY id'),
      events: raw.all('SELECT * FROM usage_events ORDER BY id'),
    });
    const before = books();

    await store.migrate();
    expect(raw.all('SELECT version, name FROM schema_migrations ORDER BY version')).toEqual(
      migrations.map(({ version, name }) => ({ version, name })),
    );
    expect(unread()).toEqual([]);
    expect(books()).toEqual(before);
    expect(() => raw.run('DELETE FROM ledger_entries')).toThrow(/append-only/);
    // A usage event per hold, still: the constraint that says so is the table's, not a dropped index's.
    expect(() => raw.run(`INSERT INTO usage_events SELECT NULL, account_id, environment, key_id, hold_id, request_id, model,
      routed_model, routed_provider, prompt_tokens, completion_tokens, credits, outcome, latency_ms, day, created_at,
      shortfall_credits, cached_tokens, reasoning_tokens FROM usage_events LIMIT 1`)).toThrow(/UNIQUE/);
    expect(await store.ledger.audit()).toEqual({ checks: 5, findings: [] });
    expect(raw.get<{ integrity_check: string }>('PRAGMA integrity_check')?.integrity_check).toBe('ok');
  });
});
