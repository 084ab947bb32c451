import { describe, expect, it } from 'vitest';
import { utcDay } from '../../src/store/utc-day.js';

describe('utcDay', () => {
  it('names the UTC day of an instant, on both sides of midnight and back again', () => {
    const midnight = Date.UTC(2026, 2, 1);
    expect(utcDay(midnight - 1)).toBe('2026-02-28');
    expect(utcDay(midnight)).toBe('2026-03-01');
    expect(utcDay(midnight + 86_400_000 - 1)).toBe('2026-03-01');
    expect(utcDay(midnight + 86_400_000)).toBe('2026-03-02');
    // Out of order, as a clock read by several callers may be.
    expect(utcDay(midnight - 1)).toBe('2026-02-28');
    expect(utcDay(Date.UTC(1969, 11, 31, 23))).toBe('1969-12-31');
    expect(utcDay(0)).toBe('1970-01-01');
  });

  it('refuses an instant that is not a date', () => {
    expect(() => utcDay(Number.NaN)).toThrow(RangeError);
  });
});
