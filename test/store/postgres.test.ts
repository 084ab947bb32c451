import { afterAll, vi } from 'vitest';
import { closeAdmin, openPostgresHarness } from './postgres-harness.js';
import { runStoreConformance } from './store.case.js';

// Each store gets its own schema, and the property case opens 100 of them: creating and migrating a schema
// costs ~50 ms of DDL on a small machine, so the whole case needs more than the default 30 s under load.
vi.setConfig({ testTimeout: 120_000 });

/** The real server on this machine, a fresh schema per store, dropped on close. Fails if it is unreachable. */
runStoreConformance('postgres', openPostgresHarness);

afterAll(closeAdmin);
