/**
 * The gateway's heap setting (src/runtime/node/heap-growth.ts): V8 collects the old generation at 1.5 times
 * what a full collection left alive, unless SVC_HEAP_GROWING_PERCENT says otherwise, and a bad value is a
 * usage error before anything starts.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { CliError } from '../../src/runtime/node/cli-output.js';
import { DEFAULT_HEAP_GROWING_PERCENT, LARGE_HEAP_LIMIT_BYTES, heapGrowingPercent, heapGrowthToApply } from '../../src/runtime/node/heap-growth.js';

interface Workload {
  percent: number;
  maxOldMb: number;
  liveOldMb: number;
}

function runWorkload(setting: string | undefined, nodeArgs: string[] = []): Workload {
  const env = { ...process.env };
  delete env.SVC_HEAP_GROWING_PERCENT;
  // A heap cap given to the test runner would change V8's own factor, which the comparison below is against.
  delete env.NODE_OPTIONS;
  if (setting !== undefined) env.SVC_HEAP_GROWING_PERCENT = setting;
  // The workload compares V8's choice for a large heap (as on any machine with 8 GB or more) with the setting.
  const r = spawnSync(process.execPath, ['--max-old-space-size=4096', ...nodeArgs, '--expose-gc', 'test/fixtures/heap/promoting-workload.mjs'], { env, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Workload;
}

describe('the heap setting', () => {
  it('reads SVC_HEAP_GROWING_PERCENT: 50 unless set, 0 for V8 own choice, anything else a usage error', () => {
    expect(heapGrowingPercent(undefined)).toBe(DEFAULT_HEAP_GROWING_PERCENT);
    expect(DEFAULT_HEAP_GROWING_PERCENT).toBe(50);
    expect(heapGrowingPercent('')).toBe(50);
    expect(heapGrowingPercent('0')).toBe(0);
    expect(heapGrowingPercent('100')).toBe(100);
    for (const bad of ['-1', '1.5', 'lots', '1001', '0x10']) {
      expect(() => heapGrowingPercent(bad)).toThrow(CliError);
      try {
        heapGrowingPercent(bad);
      } catch (e) {
        expect((e as CliError).exitCode).toBe(2);
        expect((e as Error).message).toContain('SVC_HEAP_GROWING_PERCENT');
      }
    }
  });

  it('leaves V8 its own choice under a capped heap, and a factor node was given, unless the setting names one', () => {
    const large = { heapSizeLimit: LARGE_HEAP_LIMIT_BYTES, execArgv: [] };
    expect(heapGrowthToApply(undefined, large)).toBe(50);
    expect(heapGrowthToApply(undefined, { ...large, heapSizeLimit: 300 * 1024 * 1024 })).toBe(0);
    expect(heapGrowthToApply('50', { ...large, heapSizeLimit: 300 * 1024 * 1024 })).toBe(50);
    expect(heapGrowthToApply(undefined, { ...large, execArgv: ['--heap-growing-percent=20'] })).toBe(0);
    expect(heapGrowthToApply('80', { ...large, execArgv: ['--heap_growing_percent=20'] })).toBe(80);
    expect(heapGrowthToApply('0', large)).toBe(0);
    // Applied in a process, as serve applies it: a capped heap keeps V8's choice.
    expect(runWorkload(undefined, ['--max-old-space-size=256']).percent).toBe(0);
  });

  it('by default keeps the dead promoted objects in the old generation to a fraction of what V8 alone lets pile up', () => {
    const own = runWorkload('0');
    const lean = runWorkload(undefined);
    expect(own.percent).toBe(0);
    expect(lean.percent).toBe(50);
    // Both keep the same objects alive; only how much garbage the old generation holds before a collection differs.
    expect(Math.abs(own.liveOldMb - lean.liveOldMb)).toBeLessThan(2);
    expect(own.maxOldMb).toBeGreaterThan(3 * own.liveOldMb);
    expect(lean.maxOldMb).toBeLessThan(0.65 * own.maxOldMb);
  });
});
