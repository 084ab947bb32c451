/** The many-instance ledger tests on the embedded store: three processes sharing one SQLite file (WAL). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe } from 'vitest';
import { clockStepCase } from './clock-step.case.js';
import { crashCase } from './crash.case.js';
import { keyFamilyCase } from './key-family.case.js';
import { idempotencyCase } from './idempotency.case.js';
import { manyInstancesCase } from './many-instances.case.js';

async function sqliteFile(): Promise<{ url: string; dir: string; drop(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-cluster-'));
  return { url: `sqlite:${join(dir, 'cluster.db')}`, dir, drop: async () => rmSync(dir, { recursive: true, force: true }) };
}

describe('three gateway processes on one SQLite file', () => {
  manyInstancesCase(sqliteFile);
  crashCase(sqliteFile);
  clockStepCase(sqliteFile);
  idempotencyCase(sqliteFile);
  keyFamilyCase(sqliteFile);
});
