/**
 * The PostgreSQL store gives up on an operation when the database is silent, not when one operation waited
 * long: a burst queued on a small pool behind a busy database is served (the 2,000-request cluster test on a
 * loaded 2-core machine answered 503 to 47 requests while the database kept answering the others), and a
 * database that accepts connections and never answers is still refused in bounded time.
 */
import { createServer, type Socket } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { openPool } from '../../src/store/postgres/database.js';
import { guard } from '../../src/store/postgres/errors.js';
import { StoreError } from '../../src/store/errors.js';
import { POSTGRES_URL } from './postgres-harness.js';

const pools: { end(options: { timeout: number }): Promise<void> }[] = [];
afterAll(async () => {
  await Promise.all(pools.map((p) => p.end({ timeout: 0 })));
});

describe('PostgreSQL operation deadline', () => {
  it('serves operations queued longer than the deadline while the database keeps answering', async () => {
    const sql = openPool(POSTGRES_URL, { schema: null, max: 1 });
    pools.push(sql);
    // One connection, five statements of 1.2 s each: the last one waits about 6 s, past the 5 s deadline.
    const started = performance.now();
    const results = await Promise.allSettled(Array.from({ length: 5 }, (_, i) => guard(() => sql`SELECT ${i}::int AS n, pg_sleep(1.2)`)));
    const waited = performance.now() - started;
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
    expect(results.map((r) => (r.status === 'fulfilled' ? (r.value[0] as { n: number }).n : -1))).toEqual([0, 1, 2, 3, 4]);
    // The test is only meaningful if the queue really outlasted the deadline.
    expect(waited).toBeGreaterThan(5_000);
  }, 20_000);

  it('waits for a connection slot when PostgreSQL refuses one for too many clients (53300), then serves', async () => {
    // A role allowed one connection stands in for a server at max_connections: the second pool is refused
    // at connection startup until the first one closes.
    const admin = openPool(POSTGRES_URL, { schema: null, max: 1 });
    pools.push(admin);
    await admin.unsafe('DROP ROLE IF EXISTS svc_capacity_probe');
    await admin.unsafe('CREATE ROLE svc_capacity_probe LOGIN CONNECTION LIMIT 1');
    const url = new URL(POSTGRES_URL);
    url.username = 'svc_capacity_probe';
    const holder = openPool(url.toString(), { schema: null, max: 1 });
    const waiter = openPool(url.toString(), { schema: null, max: 1 });
    pools.push(waiter);
    try {
      await holder`SELECT 1`;
      // Unguarded, the waiter is refused at once: this is the condition under test.
      const refused = await waiter`SELECT 1`.catch((e: unknown) => e);
      expect((refused as { code?: string }).code).toBe('53300');
      const started = performance.now();
      setTimeout(() => void holder.end({ timeout: 0 }), 600);
      const [row] = await guard(() => waiter<{ n: number }[]>`SELECT 7::int AS n`);
      expect(row?.n).toBe(7);
      expect(performance.now() - started).toBeGreaterThan(500);
    } finally {
      await holder.end({ timeout: 0 });
      await waiter.end({ timeout: 0 });
      await admin.unsafe('DROP ROLE IF EXISTS svc_capacity_probe');
    }
  }, 20_000);

  it('refuses as unavailable when the database accepts connections and never answers', async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    const sql = openPool(`postgres://postgres@127.0.0.1:${port}/test`, { schema: null, max: 1 });
    pools.push(sql);
    try {
      const error = await guard(() => sql`SELECT 1`).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreError);
      expect((error as StoreError).code).toBe('unavailable');
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  }, 15_000);
});
