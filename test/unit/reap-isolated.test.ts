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

  describe('when the database stops answering in the middle of a pass done hold by hold', () => {
    const away = new StoreError('unavailable', 'database unreachable');
    const interrupted = 'StoreError: database unreachable';
    /** Steps over `due` whose one transaction fails, and whose `where` step fails with `away` once reached. */
    function cutAt(due: string[], stuck: Set<string>, where: 'void c' | 'second listing' | 'write-offs'): ReturnType<typeof steps> {
      const pieces = steps(due, stuck, { batchFails: new Error('statement timeout') });
      const { voidIfDue, dueHoldIds } = pieces;
      let listings = 0;
      pieces.voidIfDue = async (id: string) => {
        if (where === 'void c' && id === 'c') throw away;
        return voidIfDue(id);
      };
      pieces.dueHoldIds = async (skip: readonly string[]) => {
        listings += 1;
        if (where === 'second listing' && listings === 2) throw away;
        return dueHoldIds(skip);
      };
      pieces.expireGrants = async () => {
        if (where === 'write-offs') throw away;
      };
      return pieces;
    }

    for (const where of ['void c', 'second listing', 'write-offs'] as const) {
      it(`counts the holds voided before it (${where})`, async () => {
        // A stuck hold makes the pass list its holds a second time.
        const due = ['a', 'b', 'c'];
        const e = await new IsolatedReaper().reap(cutAt(due, where === 'second listing' ? new Set(['a']) : new Set(), where)).catch((error: unknown) => error);
        expect(e).toBeInstanceOf(ReapIncomplete);
        const voided = where === 'void c' ? 2 : where === 'second listing' ? 2 : 3;
        expect(e).toMatchObject({ voided, expiryError: null, batchError: 'Error: statement timeout', interrupted });
        expect((e as Error).message).toContain(`then the database stopped answering (${interrupted}) and the pass ended there`);
      });
    }

    it('logs it as loudly as a pass that fails before it starts, and says the next pass goes on', async () => {
      const e = (await new IsolatedReaper().reap(cutAt(['a', 'b', 'c'], new Set(), 'void c')).catch((error: unknown) => error)) as ReapIncomplete;
      const line = reapIncompleteLine(e);
      expect(line.level).toBe('error');
      expect(line.msg).toBe("the hold reaper's pass, done piece by piece, ended when the database stopped answering; the next pass goes on");
      expect(line.fields).toMatchObject({ voided: 2, failedHoldCount: 0, interrupted });
    });

    it('names the holds it could not void before it, and remembers them: the next pass goes hold by hold', async () => {
      const due = ['a', 'b', 'c'];
      const stuck = new Set(['a']);
      const reaper = new IsolatedReaper();
      const e = (await reaper.reap(cutAt(due, stuck, 'second listing')).catch((error: unknown) => error)) as ReapIncomplete;
      expect(e).toMatchObject({ voided: 2, failedHolds: [{ holdId: 'a' }], interrupted });
      const line = reapIncompleteLine(e);
      expect(line.level).toBe('error');
      expect(line.msg.startsWith('the hold reaper could not do all of its pass (then the database stopped answering and the next pass goes on)')).toBe(true);
      const next = steps(due, stuck);
      await expect(reaper.reap(next)).rejects.toMatchObject({ failedHolds: [{ holdId: 'a' }], batchError: null, interrupted: null });
      expect(next.batches).toBe(0);
    });

    it('passes its own error on when the pass had done nothing yet', async () => {
      const due = ['c'];
      await expect(new IsolatedReaper().reap(cutAt(due, new Set(), 'void c'))).rejects.toBe(away);
      expect(due).toEqual(['c']);
    });
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
