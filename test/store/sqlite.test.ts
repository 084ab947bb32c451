import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../src/core/clock.js';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { T0 } from './cases/harness.js';
import { runStoreConformance } from './store.case.js';

/** A real database file in a fresh directory per store, removed (with its WAL files) on close. */
runStoreConformance('sqlite (file)', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-gateway-store-'));
  const clock = new ManualClock(T0);
  const store = createSqliteStore({ path: join(dir, 'gateway.db'), clock });
  return {
    store,
    clock,
    async close() {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});
