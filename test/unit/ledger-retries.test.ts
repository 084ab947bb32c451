/**
 * withLedgerRetries bounds the database's silence, not one call's wait: a database that answers nothing is
 * reported unavailable in time (a 503, never a hang), while a call queued behind others that keep being
 * answered (a burst on a small pool) waits on, up to the hard bound.
 */
import { describe, expect, it } from 'vitest';
import { withLedgerRetries } from '../../src/billing/meter.js';
import { StoreError } from '../../src/store/errors.js';

/** Budget: 10 + 20 ms of retry delays plus the 500 ms slack. */
const DELAYS = [10, 20] as const;
const BUDGET_MS = 530;

const never = (): Promise<never> => new Promise<never>(() => undefined);
const after = <T>(ms: number, value: T): Promise<T> => new Promise((resolve) => setTimeout(() => resolve(value), ms));

describe('withLedgerRetries', () => {
  it('a database that answers nothing: unavailable once its silence reaches the budget', async () => {
    // Let any earlier answer age past the budget first.
    await after(BUDGET_MS + 50, null);
    const started = performance.now();
    const error = await withLedgerRetries(never, DELAYS).catch((e: unknown) => e);
    const waited = performance.now() - started;
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).code).toBe('unavailable');
    expect(waited).toBeLessThan(BUDGET_MS + 300);
  });

  it('a slow call while other calls are answered: waits past the budget and gets its answer', async () => {
    // Other requests' calls keep getting answers every 100 ms while this one is queued for 2.5x the budget.
    let running = true;
    const others = (async () => {
      while (running) await withLedgerRetries(() => after(100, 'other'), DELAYS);
    })();
    try {
      const started = performance.now();
      await expect(withLedgerRetries(() => after(BUDGET_MS * 2.5, 'mine'), DELAYS)).resolves.toBe('mine');
      expect(performance.now() - started).toBeGreaterThan(BUDGET_MS * 2);
    } finally {
      running = false;
      await others;
    }
  });

  it('other calls the database ends for contention (a lock timeout) show it is there, as answers do', async () => {
    let running = true;
    const contended = (): Promise<never> =>
      after(100, null).then(() => Promise.reject(new StoreError('unavailable', 'PostgreSQL ended the transaction: lock timeout', true)));
    const others = (async () => {
      while (running) await withLedgerRetries(contended, DELAYS).catch(() => undefined);
    })();
    try {
      await expect(withLedgerRetries(() => after(BUDGET_MS * 2.5, 'mine'), DELAYS)).resolves.toBe('mine');
    } finally {
      running = false;
      await others;
    }
  });

  it('but never past sixteen times the budget, whatever the others do', async () => {
    let running = true;
    const others = (async () => {
      while (running) await withLedgerRetries(() => after(100, 'other'), DELAYS);
    })();
    try {
      const started = performance.now();
      const error = await withLedgerRetries(never, DELAYS).catch((e: unknown) => e);
      const waited = performance.now() - started;
      expect((error as StoreError).code).toBe('unavailable');
      expect(waited).toBeGreaterThanOrEqual(BUDGET_MS * 16 - 5);
      expect(waited).toBeLessThan(BUDGET_MS * 16 + 400);
    } finally {
      running = false;
      await others;
    }
  });

  it('an unavailability a retry within the budget will not cure (a full disk): thrown at once, not retried', async () => {
    let calls = 0;
    const full = new StoreError('unavailable', 'SQLite cannot be used now (SQLITE_FULL): database or disk is full', false, true);
    await expect(
      withLedgerRetries(() => {
        calls += 1;
        return Promise.reject(full);
      }, DELAYS),
    ).rejects.toBe(full);
    // One call: no retry was scheduled (a timed bound here would only measure the machine).
    expect(calls).toBe(1);
  });

  it('an error that is not "unreachable" is the database answering: thrown at once, not retried', async () => {
    let calls = 0;
    const refused = new StoreError('invalid_input', 'bad');
    await expect(
      withLedgerRetries(() => {
        calls++;
        return Promise.reject(refused);
      }, DELAYS),
    ).rejects.toBe(refused);
    expect(calls).toBe(1);
  });
});
