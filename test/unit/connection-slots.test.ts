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

  it('counts a slot that was never given back as free once its lease ran out', async () => {
    const slots = new ConnectionSlots(1, { leaseMs: 40, waitMs: 10_000, pollMs: 2 });
    await slots.acquire();
    const started = performance.now();
    await slots.acquire();
    expect(performance.now() - started).toBeGreaterThanOrEqual(35);
    expect(slots.inUse).toBe(1);
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
