/**
 * The ledger as the metrics see it: every call timed by operation, failures counted. A wrapper, so the
 * stores stay free of metrics and a runtime without them (Workers) uses the ledger as it is.
 */
import type { LedgerStore } from '../store/types.js';

export type LedgerCallRecorder = (operation: string, seconds: number, failed: boolean) => void;

const OPERATIONS = ['grant', 'reserve', 'settle', 'void', 'renewHold', 'balance', 'reapExpiredHolds'] as const;

export function instrumentLedger(ledger: LedgerStore, record: LedgerCallRecorder): LedgerStore {
  const observed: LedgerStore = Object.create(ledger) as LedgerStore;
  for (const operation of OPERATIONS) {
    Object.defineProperty(observed, operation, {
      // A `then` on the store's promise, not an async wrapper around an await: a ledger call is on every
      // request's path two or three times, and each async layer is a promise and a microtask more.
      value: (...args: unknown[]): Promise<unknown> => {
        const startedAt = performance.now();
        const done = (failed: boolean): void => record(operation, (performance.now() - startedAt) / 1000, failed);
        let pending: Promise<unknown>;
        try {
          // Looked up at each call, so the ledger stays the one source of its methods.
          pending = (ledger[operation] as (...a: unknown[]) => Promise<unknown>).apply(ledger, args);
        } catch (e) {
          done(true);
          return Promise.reject(e);
        }
        return pending.then(
          (result) => {
            done(false);
            return result;
          },
          (e: unknown) => {
            done(true);
            throw e;
          },
        );
      },
    });
  }
  return observed;
}
