import { describe, expect, it } from 'vitest';
import { AlignedClock } from '../../src/core/aligned-clock.js';
import { MonotonicClock } from '../../src/core/monotonic-clock.js';

/**
 * A machine as the clocks see it: a wall clock that NTP or an operator may step, and a monotonic clock that
 * only runs forward. `step` moves the wall clock alone, as a real step does.
 */
function machine(wallStart = 1_700_000_000_000, monotonicStart = 5_000.25) {
  const m = {
    wallMs: wallStart,
    monotonicMs: monotonicStart,
    wall: () => Math.floor(m.wallMs),
    monotonic: () => m.monotonicMs,
    /** Real time passes: both clocks run. */
    pass(ms: number) {
      m.wallMs += ms;
      m.monotonicMs += ms;
    },
    step(ms: number) {
      m.wallMs += ms;
    },
  };
  return m;
}

const MINUTES_20 = 20 * 60_000;

describe('MonotonicClock', () => {
  it('starts at the wall time, then runs on the monotonic clock: a wall-clock step moves nothing', () => {
    const m = machine();
    const clock = new MonotonicClock(m.monotonic, m.wall);
    expect(clock.now()).toBe(m.wallMs);
    m.pass(1500.7);
    expect(clock.now()).toBe(1_700_000_001_500);
    m.step(MINUTES_20);
    expect(clock.now()).toBe(1_700_000_001_500);
    expect(clock.offset).toBe(-MINUTES_20);
    m.step(-2 * MINUTES_20);
    m.pass(10);
    expect(clock.now()).toBe(1_700_000_001_510);
  });

  it('reads whole milliseconds and never goes back', () => {
    const m = machine();
    const clock = new MonotonicClock(m.monotonic, m.wall);
    let last = clock.now();
    for (let i = 0; i < 1000; i++) {
      m.pass(0.37);
      const t = clock.now();
      expect(Number.isInteger(t)).toBe(true);
      expect(t).toBeGreaterThanOrEqual(last);
      last = t;
    }
  });

  it('runs on the real performance.now() by default, within a few ms of Date.now()', () => {
    const clock = new MonotonicClock();
    expect(Math.abs(clock.now() - Date.now())).toBeLessThan(50);
  });
});

describe('AlignedClock', () => {
  it('follows the reference, measured at the midpoint of the round trip', async () => {
    const m = machine();
    const clock = new AlignedClock(m.monotonic, m.wall);
    expect(clock.now()).toBe(m.wallMs);
    // The reference is 5 s ahead; the round trip takes 40 ms.
    const sample = await clock.align(async () => {
      m.pass(20);
      const remote = m.wallMs + 5000;
      m.pass(20);
      return remote;
    });
    expect(sample).toEqual({ roundTripMs: 40, moved: true });
    expect(clock.offset).toBe(5000);
    m.pass(1000);
    expect(clock.now()).toBe(m.wallMs + 5000);
  });

  it('is not moved by a step of the wall clock between alignments, nor by the next alignment', async () => {
    const m = machine();
    const clock = new AlignedClock(m.monotonic, m.wall);
    const reference = { offset: 0 };
    // The database's clock: the machine's time as it was before any step, read mid round trip.
    const unstepped = { wallMs: m.wallMs, monotonicMs: m.monotonicMs };
    const database = async () => {
      m.pass(1);
      const t = unstepped.wallMs + (m.monotonicMs - unstepped.monotonicMs) + reference.offset;
      m.pass(1);
      return t;
    };
    await clock.align(database);
    const before = clock.now();
    m.step(MINUTES_20);
    m.pass(30_000);
    expect(clock.now()).toBe(before + 30_000);
    // The realignment measures the reference, not the wall clock: still no jump.
    expect(await clock.align(database)).toEqual({ roundTripMs: 2, moved: false });
    expect(clock.now()).toBe(before + 30_002);
    expect(clock.offset).toBe(-MINUTES_20);
  });

  it('moves only when a measurement proves it off by more than half the round trip', async () => {
    const m = machine();
    const clock = new AlignedClock(m.monotonic, m.wall);
    const measure = (offset: number, halfTrip: number) => async () => {
      m.pass(halfTrip);
      const remote = m.wallMs + offset;
      m.pass(halfTrip);
      return remote;
    };
    await clock.align(measure(0, 1));
    // 100 ms off, measured under load with a 1 s round trip: within the measurement's error, kept.
    expect(await clock.align(measure(100, 500))).toMatchObject({ moved: false });
    expect(clock.offset).toBe(0);
    // The same 100 ms measured with a 4 ms round trip is proven: the clock moves to the reference.
    expect(await clock.align(measure(100, 2))).toMatchObject({ moved: true });
    expect(clock.offset).toBe(100);
    // A reference that stepped back 20 minutes is followed too: the database is the authority.
    expect(await clock.align(measure(-MINUTES_20, 2))).toMatchObject({ moved: true });
    expect(clock.offset).toBe(-MINUTES_20);
  });

  it('aligns to a real PostgreSQL server clock within a few milliseconds', async () => {
    const { createPostgresStore } = await import('../../src/store/postgres/postgres-store.js');
    const { POSTGRES_URL } = await import('../store/postgres-harness.js');
    const clock = new AlignedClock();
    const store = createPostgresStore({ url: POSTGRES_URL, clock });
    try {
      const { roundTripMs } = await clock.align(() => store.serverTime());
      const server = await store.serverTime();
      // Same machine: the server clock is the local clock, so the offset and the residual are tiny.
      expect(roundTripMs).toBeLessThan(1000);
      expect(Math.abs(clock.offset)).toBeLessThan(50);
      expect(Math.abs(clock.now() - server)).toBeLessThan(50);
    } finally {
      await store.close();
    }
  });
});
