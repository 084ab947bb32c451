/**
 * The server's reaper when one due hold cannot be voided (books edited by hand so that returning its
 * credits breaks a grant's CHECK): the other due holds are still voided pass after pass, and the stuck one
 * is named in an error line. Before, the pass was one transaction that failed on that hold every time, and
 * since it takes the oldest leases first, no stale hold was ever voided again.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, parseConfig } from '../../src/config/schema.js';
import type { Logger } from '../../src/core/logger.js';
import { SqliteConnection, openSqliteDatabase } from '../../src/store/sqlite/database.js';
import { seedAccount, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { until } from '../helpers/until.js';

interface Line {
  level: 'warn' | 'error';
  msg: string;
  fields: Record<string, unknown> | undefined;
}

describe('the hold reaper with a hold it cannot void', () => {
  let gw: TestGateway | undefined;
  afterEach(async () => {
    await gw?.close();
    gw = undefined;
  });

  it('voids the other due holds on every pass and names the stuck one in an error line', async () => {
    const lines: Line[] = [];
    const logger: Logger = {
      debug() {},
      info() {},
      warn: (msg, fields) => void lines.push({ level: 'warn', msg, fields }),
      error: (msg, fields) => void lines.push({ level: 'error', msg, fields }),
    };
    const config = parseConfig({ ...(structuredClone(DEFAULT_CONFIG) as Record<string, unknown>), server: { reaper_interval_ms: 100 } });
    gw = await startTestGateway({ config, logger });
    const { store } = gw;
    const broken = await seedAccount(store, { purchased: 100 });
    const healthy = await seedAccount(store, { purchased: 100 });
    // Reserved as a gateway that then died would have: leases that run out soon, after the books are edited
    // below. The stuck one runs out first.
    expect((await store.ledger.reserve({ holdId: 'hold_stuck', keyId: broken.keyId, amount: 10, leaseMs: 400 })).ok).toBe(true);
    expect((await store.ledger.reserve({ holdId: 'hold_orphan', keyId: healthy.keyId, amount: 10, leaseMs: 450 })).ok).toBe(true);
    const raw = new SqliteConnection(openSqliteDatabase(join(gw.dir, 'gateway.db')));
    try {
      raw.run('UPDATE credit_grants SET remaining = amount WHERE account_id = ?', broken.accountId);
    } finally {
      raw.close();
    }
    await until(
      'the orphaned hold to be voided',
      async () => ((await store.ledger.balance(healthy.accountId, 'live')).reserved === 0 ? true : null),
      10_000,
    );
    const stuckLine = await until('the stuck hold to be named', async () =>
      lines.find((l) => l.level === 'error' && l.msg.startsWith('the hold reaper could not do all of its pass')) ?? null,
    );
    expect(stuckLine.fields).toMatchObject({ failedHoldCount: 1, failedHolds: [{ holdId: 'hold_stuck' }], expiryError: null });
    expect(lines).toContainEqual({ level: 'warn', msg: 'voided expired holds (their gateway stopped renewing them)', fields: { count: 1 } });
    // A later orphan is voided too, past the stuck one.
    expect((await store.ledger.reserve({ holdId: 'hold_later', keyId: healthy.keyId, amount: 5, leaseMs: 1 })).ok).toBe(true);
    await until('the later orphan to be voided', async () =>
      (await store.ledger.balance(healthy.accountId, 'live')).reserved === 0 ? true : null,
    );
    expect(await store.ledger.countPendingHolds()).toBe(1);
  });
});
