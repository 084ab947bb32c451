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
      value: async (...args: unknown[]): Promise<unknown> => {
        const startedAt = performance.now();
        try {
          // Looked up at each call, so the ledger stays the one source of its methods.
          const result = await (ledger[operation] as (...a: unknown[]) => Promise<unknown>).apply(ledger, args);
          record(operation, (performance.now() - startedAt) / 1000, false);
          return result;
        } catch (e) {
          record(operation, (performance.now() - startedAt) / 1000, true);
          throw e;
        }
      },
    });
  }
  return observed;
}
