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
