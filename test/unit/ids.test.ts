import { describe, expect, it } from 'vitest';
import { newTimeOrderedId } from '../../src/core/ids.js';

describe('newTimeOrderedId', () => {
  it('sorts by creation time in byte order and in a locale collation, at a fixed width', () => {
    // Instants chosen so the time digits cross letter/digit boundaries and carries.
    const instants = [0, 9, 10, 35, 36, 1_295, 1_296, 1_700_000_000_000, 1_700_000_000_001, 1_800_000_000_000, 36 ** 9 - 1];
    const ids = instants.map((t) => newTimeOrderedId('hold_', t));
    for (const id of ids) expect(id).toMatch(/^hold_[0-9a-z]{9}[0-9A-Za-z]{16}$/);
    const byBytes = [...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    expect(byBytes).toEqual(ids);
    const collator = new Intl.Collator('en-US');
    expect([...ids].sort(collator.compare)).toEqual(ids);
  });

  it('keeps ids made in the same millisecond distinct', () => {
    const ids = new Set(Array.from({ length: 10_000 }, () => newTimeOrderedId('hold_', 1_700_000_000_000)));
    expect(ids.size).toBe(10_000);
  });
});
