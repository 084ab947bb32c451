import { statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { CHECKPOINT_INTERVAL_MS, SAFETY_AUTOCHECKPOINT_PAGES } from '../../src/store/sqlite/checkpointer.js';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/types.js';
import { T0, hold, purchased, seedAccount, usage } from './cases/harness.js';

/** The WAL is checkpointed by the worker thread, not by the commits of the serving connection. */
describe('sqlite WAL checkpointer', () => {
  let dir: string;
  let path: string;
  let store: Store;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-gateway-ckpt-'));
    path = join(dir, 'gateway.db');
    store = createSqliteStore({ path, clock: new ManualClock(T0) });
    await store.migrate();
  });

  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('copies committed pages into the database file within a few intervals, far below the safety threshold', async () => {
    const owner = await seedAccount(store);
    await store.ledger.grant(purchased(owner, 1_000_000));
    await sleep(CHECKPOINT_INTERVAL_MS * 3);
    const before = statSync(path).size;
    // A few hundred pages of writes: well under SAFETY_AUTOCHECKPOINT_PAGES, so only the worker checkpoints them.
    for (let i = 0; i < 300; i++) {
      const id = await hold(store, owner, 10);
      await store.ledger.settle({ holdId: id, amount: 3, usage: usage({ requestId: `req_${i}` }) });
    }
    expect(statSync(`${path}-wal`).size).toBeLessThan(SAFETY_AUTOCHECKPOINT_PAGES * 4096);
    const deadline = Date.now() + 5_000;
    while (statSync(path).size <= before && Date.now() < deadline) await sleep(CHECKPOINT_INTERVAL_MS);
    expect(statSync(path).size).toBeGreaterThan(before);
  });

  it('closes cleanly and leaves a consistent file another store can open', async () => {
    const owner = await seedAccount(store);
    await store.ledger.grant(purchased(owner, 500));
    await store.close();
    const again = createSqliteStore({ path, clock: new ManualClock(T0) });
    await again.migrate();
    expect((await again.ledger.balance(owner.accountId, 'live')).purchased).toBe(500);
    await again.close();
  });
});
