/**
 * The many-instance tests on PostgreSQL (the machine's server, 127.0.0.1:5432, database `test`), each in
 * its own schema. Fails, never skips, when PostgreSQL is unreachable.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe } from 'vitest';
import { POSTGRES_URL, closeAdmin, createTestSchema, dropTestSchema } from '../store/postgres-harness.js';
import { clockStepCase } from './clock-step.case.js';
import { crashCase } from './crash.case.js';
import { keyFamilyCase } from './key-family.case.js';
import { idempotencyCase, lostReplyCase } from './idempotency.case.js';
import { manyInstancesCase } from './many-instances.case.js';
import { restartCase } from './restart.case.js';
import { startTcpProxy } from './tcp-proxy.js';

const withSchema = (base: string, schema: string): string => `${base}${base.includes('?') ? '&' : '?'}schema=${schema}`;

async function postgresSchema(): Promise<{ url: string; dir: string; drop(): Promise<void> }> {
  const schema = await createTestSchema();
  const dir = mkdtempSync(join(tmpdir(), 'svc-pg-cluster-'));
  return {
    url: withSchema(POSTGRES_URL, schema),
    dir,
    async drop() {
      await dropTestSchema(schema);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

afterAll(() => closeAdmin());

describe('three gateway processes on one PostgreSQL', () => {
  manyInstancesCase(postgresSchema);
  crashCase(postgresSchema);
  clockStepCase(postgresSchema);
  idempotencyCase(postgresSchema);
  keyFamilyCase(postgresSchema);
  lostReplyCase(proxiedSchema);
  restartCase(proxiedSchema);
});

async function proxiedSchema() {
  const base = await postgresSchema();
  const target = new URL(POSTGRES_URL);
  const proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
  const proxied = new URL(POSTGRES_URL);
  proxied.port = String(proxy.port);
  return {
    ...base,
    proxiedUrl: withSchema(`${proxied.toString()}`, new URL(base.url).searchParams.get('schema') as string),
    proxy,
    async drop() {
      await proxy.close();
      await base.drop();
    },
  };
}
