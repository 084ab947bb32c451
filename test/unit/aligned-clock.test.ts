import { describe, expect, it } from 'vitest';
import { AlignedClock } from '../../src/core/aligned-clock.js';

describe('AlignedClock', () => {
  it('follows the reference, measured at the midpoint of the round trip', async () => {
    let local = 1_000_000;
    const clock = new AlignedClock(() => local);
    expect(clock.now()).toBe(1_000_000);
    // The reference is 5 s ahead; the round trip takes 40 ms of local time.
    await clock.align(async () => {
      local += 20;
      const remote = local + 5000;
      local += 20;
      return remote;
    });
    expect(clock.offset).toBe(5000);
    local += 1000;
    expect(clock.now()).toBe(local + 5000);
  });

  it('aligns to a real PostgreSQL server clock within a few milliseconds', async () => {
    const { createPostgresStore } = await import('../../src/store/postgres/postgres-store.js');
    const { POSTGRES_URL } = await import('../store/postgres-harness.js');
    const clock = new AlignedClock();
    const store = createPostgresStore({ url: POSTGRES_URL, clock });
    try {
      await clock.align(() => store.serverTime());
      const server = await store.serverTime();
      // Same machine: the server clock is the local clock, so the offset and the residual are tiny.
      expect(Math.abs(clock.offset)).toBeLessThan(50);
      expect(Math.abs(clock.now() - server)).toBeLessThan(50);
    } finally {
      await store.close();
    }
  });
});
