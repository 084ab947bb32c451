import { spawnSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { DeadlineHeap } from '../../src/core/deadline-heap.js';
import { repeatEvery, runtimeTimer, useDeadlineScheduler } from '../../src/core/deadline-timers.js';

/** Runs a module in a fresh Node with DeadlineHeap imported from the build; returns its stdout. */
function runScript(body: string): string {
  const script = `import { DeadlineHeap } from './dist/core/deadline-heap.js';\n${body}`;
  return spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }).stdout.trim();
}

describe('DeadlineHeap', () => {
  it('fires each deadline once, in order of due instant, never before it is due', async () => {
    const heap = new DeadlineHeap();
    const fired: { name: string; lateMs: number }[] = [];
    const at = (name: string, ms: number): void => {
      const due = performance.now() + ms;
      heap.schedule(ms, () => fired.push({ name, lateMs: performance.now() - due }));
    };
    at('c', 60);
    at('a', 10);
    at('b', 30);
    at('a2', 10);
    await sleep(120);
    expect(fired.map((f) => f.name)).toEqual(['a', 'a2', 'b', 'c']);
    for (const f of fired) expect(f.lateMs).toBeGreaterThanOrEqual(0);
    expect(heap.pending).toBe(0);
    expect(heap.stored).toBe(0);
  });

  it('does not fire a cancelled deadline; cancelling after it fired does nothing', async () => {
    const heap = new DeadlineHeap();
    const fired: string[] = [];
    const early = heap.schedule(5, () => fired.push('early'));
    const cancelled = heap.schedule(10, () => fired.push('cancelled'));
    heap.schedule(20, () => fired.push('late'));
    cancelled.cancel();
    cancelled.cancel();
    expect(heap.pending).toBe(2);
    await sleep(50);
    early.cancel();
    expect(fired).toEqual(['early', 'late']);
    expect(heap.pending).toBe(0);
  });

  it('forgets everything once nothing live is left, and sweeps cancelled deadlines that outnumber the live', () => {
    const heap = new DeadlineHeap();
    const all = Array.from({ length: 1000 }, (_, i) => heap.schedule(600_000 + i, () => undefined));
    for (const d of all.slice(0, 900)) d.cancel();
    expect(heap.pending).toBe(100);
    // Far-ahead deadlines cancelled at once (the usual case) must not stay in memory until they come due.
    expect(heap.stored).toBeLessThan(300);
    for (const d of all.slice(900)) d.cancel();
    expect(heap.pending).toBe(0);
    expect(heap.stored).toBe(0);
  });

  it('lets a firing deadline cancel another that is due and schedule a new one', async () => {
    const heap = new DeadlineHeap();
    const fired: string[] = [];
    let second: { cancel(): void } | null = null;
    heap.schedule(10, () => {
      fired.push('first');
      second?.cancel();
      heap.schedule(10, () => fired.push('scheduled by first'));
    });
    second = heap.schedule(10, () => fired.push('second'));
    heap.schedule(15, () => fired.push('third'));
    await sleep(80);
    expect(fired).toEqual(['first', 'third', 'scheduled by first']);
  });

  it('keeps firing the others when one deadline throws, and lets the error surface as uncaught', () => {
    // In a child: an uncaught error is what a throwing setTimeout callback gives too, and vitest would count it.
    const out = runScript(`
      const heap = new DeadlineHeap();
      process.on('uncaughtException', (e) => console.log('uncaught ' + e.message));
      heap.schedule(5, () => { throw new Error('boom'); });
      heap.schedule(5, () => console.log('after'));`);
    expect(out.split('\n').sort()).toEqual(['after', 'uncaught boom']);
  });

  it('keeps the process alive for a pending deadline unless it says otherwise', () => {
    const run = (keepAlive: boolean): string =>
      runScript(`
        const heap = new DeadlineHeap();
        heap.schedule(300, () => console.log('fired'), { keepAlive: ${String(keepAlive)} });`);
    expect(run(true)).toBe('fired');
    expect(run(false)).toBe('');
  });

  it('repeats a deadline until it is cancelled (the lease renewal and the stream ticker), on the heap and on runtime timers', async () => {
    for (const schedule of [new DeadlineHeap().schedule, runtimeTimer]) {
      const previous = useDeadlineScheduler(schedule);
      try {
        let ticks = 0;
        const every = repeatEvery(20, () => {
          ticks += 1;
        });
        await sleep(110);
        every.cancel();
        const atCancel = ticks;
        await sleep(60);
        // About five periods in 110 ms; none after the cancel.
        expect(atCancel).toBeGreaterThanOrEqual(3);
        expect(atCancel).toBeLessThanOrEqual(5);
        expect(ticks).toBe(atCancel);
      } finally {
        useDeadlineScheduler(previous);
      }
    }
  });
});
