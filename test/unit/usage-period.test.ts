import { describe, expect, it } from 'vitest';
import { resolvePeriod } from '../../src/usage/period.js';

const now = Date.parse('2026-11-22T15:00:00Z');

describe('usage period', () => {
  it('defaults to the 30 days ending today', () => {
    expect(resolvePeriod(undefined, undefined, now)).toEqual({ startDay: '2026-10-24', endDay: '2026-11-22' });
  });
  it('runs from start_date to today, or for 30 days to end_date', () => {
    expect(resolvePeriod('2026-11-01', undefined, now)).toEqual({ startDay: '2026-11-01', endDay: '2026-11-22' });
    expect(resolvePeriod(undefined, '2026-03-01', now)).toEqual({ startDay: '2026-01-31', endDay: '2026-03-01' });
  });
  it('accepts leap days and refuses impossible dates', () => {
    expect(resolvePeriod('2028-02-29', '2028-02-29', now).startDay).toBe('2028-02-29');
    expect(() => resolvePeriod('2026-02-29', undefined, now)).toThrowError(/calendar date/);
    expect(() => resolvePeriod('2026-1-01', undefined, now)).toThrowError(/YYYY-MM-DD/);
  });
  it('refuses reversed and over-long ranges', () => {
    expect(() => resolvePeriod('2026-11-02', '2026-11-01', now)).toThrowError(/before/);
    expect(() => resolvePeriod('2025-01-01', '2026-11-01', now)).toThrowError(/366/);
    expect(resolvePeriod('2025-11-22', '2026-11-22', now).startDay).toBe('2025-11-22');
  });
});
