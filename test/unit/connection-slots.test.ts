import { describe, expect, it } from 'vitest';
import { ConnectionSlots } from '../../src/runtime/workers/connection-slots.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('a Worker isolate\'s connection slots', () => {
  it('lets `limit` requests hold a slot; the next waits until one is given back', async () => {
    const slots = new ConnectionSlots(2, { leaseMs: 60_000, waitMs: 10_000, pollMs: 2 });
    const a = await slots.acquire();
    await slots.acquire();
    expect(slots.inUse).toBe(2);
    let third = false;
    const waiting = slots.acquire().then((slot) => {
      third = true;
      return slot;
    });
    await sleep(30);
    expect(third).toBe(false);
    a.release();
    const c = await waiting;
    expect(slots.inUse).toBe(2);
    c.release();
    c.release();
    expect(slots.inUse).toBe(1);
  });

  it('counts a slot that was never given back as free once its lease ran out; a touch starts the lease again', async () => {
    const slots = new ConnectionSlots(1, { leaseMs: 60, waitMs: 5_000, pollMs: 2 });
    const lost = await slots.acquire();
    // Touched while in use, the slot stays held past its first lease.
    for (let i = 0; i < 4; i++) {
      await sleep(25);
      lost.touch();
    }
    expect(slots.inUse).toBe(1);
    const started = performance.now();
    const next = await slots.acquire();
    const waited = performance.now() - started;
    expect(waited).toBeGreaterThanOrEqual(50);
    // Got by the lease running out, not by giving up after waitMs: the slot it holds is a real one.
    expect(waited).toBeLessThan(2_000);
    expect(slots.inUse).toBe(1);
    next.release();
    expect(slots.inUse).toBe(0);
  });

  it('lets a request go on without a slot after waiting `waitMs`, holding nothing', async () => {
    const slots = new ConnectionSlots(1, { leaseMs: 60_000, waitMs: 30, pollMs: 2 });
    const held = await slots.acquire();
    const started = performance.now();
    const none = await slots.acquire();
    expect(performance.now() - started).toBeGreaterThanOrEqual(25);
    expect(slots.inUse).toBe(1);
    none.release();
    expect(slots.inUse).toBe(1);
    held.release();
    expect(slots.inUse).toBe(0);
  });
});
