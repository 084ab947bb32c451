import { describe, expect, it } from 'vitest';
import { StoreError } from '../../src/store/errors.js';
import { IsolatedReaper, ReapIncomplete, reapIncompleteLine, type ReapSteps } from '../../src/store/reap-isolated.js';

/** A reaper's pieces over an in-memory list of due holds, some of which cannot be voided. */
function steps(due: string[], stuck: Set<string>, opts: { batchFails?: unknown; limit?: number } = {}): ReapSteps & { batches: number } {
  const limit = opts.limit ?? 100;
  const s = {
    batches: 0,
    async batch() {
      s.batches += 1;
      if (opts.batchFails !== undefined) throw opts.batchFails;
      if (due.some((id) => stuck.has(id))) throw new Error('CHECK constraint failed');
      const n = due.length;
      due.length = 0;
      return n;
    },
    async dueHoldIds(skip: readonly string[]) {
      return due.filter((id) => !skip.includes(id)).slice(0, limit);
    },
    async voidIfDue(id: string) {
      if (stuck.has(id)) throw new Error(`CHECK constraint failed: ${id}`);
      due.splice(due.indexOf(id), 1);
      return true;
    },
    async expireGrants() {},
  };
  return s;
}

describe('the reaper with its failures isolated', () => {
  it('voids what it can, lists past a page of stuck holds, and skips the one transaction while any is stuck', async () => {
    const reaper = new IsolatedReaper();
    const due = ['a', 'b', 'c', 'd'];
    const stuck = new Set(['a', 'b']);
    const first = steps(due, stuck, { limit: 2 });
    const e = await reaper.reap(first).catch((error: unknown) => error);
    expect(e).toBeInstanceOf(ReapIncomplete);
    expect(e).toMatchObject({ voided: 2, failedHolds: [{ holdId: 'a' }, { holdId: 'b' }], batchError: 'Error: CHECK constraint failed' });
    expect(due).toEqual(['a', 'b']);
    // Still stuck: no second try of the one transaction.
    const second = steps(due, stuck);
    await expect(reaper.reap(second)).rejects.toMatchObject({ voided: 0, batchError: null });
    expect(second.batches).toBe(0);
    // Repaired: voided hold by hold once more, then back to one transaction.
    stuck.clear();
    expect(await reaper.reap(steps(due, stuck))).toBe(2);
    const fourth = steps(['e'], stuck);
    expect(await reaper.reap(fourth)).toBe(1);
    expect(fourth.batches).toBe(1);
  });

  it('passes an unreachable database on as it is, and tells a one-transaction failure the pieces survived', async () => {
    const unavailable = new StoreError('unavailable', 'database unreachable');
    await expect(new IsolatedReaper().reap(steps(['a'], new Set(), { batchFails: unavailable }))).rejects.toBe(unavailable);
    const e = await new IsolatedReaper().reap(steps(['a'], new Set(), { batchFails: new Error('statement timeout') })).catch((error: unknown) => error);
    expect(e).toMatchObject({ voided: 1, failedHolds: [], expiryError: null, batchError: 'Error: statement timeout' });
    expect(reapIncompleteLine(e as ReapIncomplete).level).toBe('warn');
  });

  it('counts the holds voided before the database stopped answering in the middle of a pass', async () => {
    const due = ['a', 'b', 'c'];
    const away = new StoreError('unavailable', 'database unreachable');
    const pieces = steps(due, new Set(), { batchFails: new Error('statement timeout') });
    const voidOne = pieces.voidIfDue;
    pieces.voidIfDue = async (id: string) => {
      if (id === 'c') throw away;
      return voidOne(id);
    };
    const e = await new IsolatedReaper().reap(pieces).catch((error: unknown) => error);
    expect(e).toBeInstanceOf(ReapIncomplete);
    expect(e).toMatchObject({ voided: 2, failedHolds: [], interrupted: 'StoreError: database unreachable' });
    expect(due).toEqual(['c']);
    const line = reapIncompleteLine(e as ReapIncomplete);
    expect(line.level).toBe('warn');
    expect(line.fields).toMatchObject({ voided: 2, interrupted: 'StoreError: database unreachable' });
    // Nothing voided before it went away: the database's own error, as before.
    const first = steps(['c'], new Set(), { batchFails: new Error('statement timeout') });
    first.voidIfDue = async () => {
      throw away;
    };
    await expect(new IsolatedReaper().reap(first)).rejects.toBe(away);
  });

  it("counts a hold the database refused for contention (a lock timeout) as that hold's failure, not the database away", async () => {
    const due = ['a', 'b'];
    const s = steps(due, new Set());
    const timeout = new StoreError('unavailable', 'PostgreSQL ended the transaction: lock timeout', true);
    s.batch = async () => {
      throw timeout;
    };
    const voidIfDue = s.voidIfDue;
    s.voidIfDue = async (id) => {
      if (id === 'a') throw timeout;
      return voidIfDue(id);
    };
    await expect(new IsolatedReaper().reap(s)).rejects.toMatchObject({ voided: 1, failedHolds: [{ holdId: 'a' }], batchError: String(timeout) });
  });

  it('names at most ten stuck holds in a log line, and counts them all', () => {
    const failed = Array.from({ length: 25 }, (_, i) => ({ holdId: `hold_${i}`, error: 'CHECK constraint failed' }));
    const line = reapIncompleteLine(new ReapIncomplete(3, failed, null, 'Error: CHECK constraint failed'));
    expect(line.level).toBe('error');
    expect(line.fields).toMatchObject({ voided: 3, failedHoldCount: 25 });
    expect(line.fields.failedHolds).toEqual(failed.slice(0, 10));
    expect(new ReapIncomplete(3, failed, null, null).message.length).toBeLessThan(400);
  });
});
