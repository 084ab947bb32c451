/**
 * The ledger as the fuzz tests judge it: every balance of the accounts a run owns, and the pending holds,
 * read before and after each request.
 */
import type { Store } from '../../src/store/types.js';

export interface Ledger {
  balances: Record<string, { earned: number; purchased: number; reserved: number }>;
  pending: number;
}

export async function readLedger(store: Store, accounts: Readonly<Record<string, string>>): Promise<Ledger> {
  const balances: Ledger['balances'] = {};
  for (const [role, id] of Object.entries(accounts)) {
    for (const env of ['live', 'test'] as const) {
      const b = await store.ledger.balance(id, env);
      balances[`${role}/${env}`] = { earned: b.earned, purchased: b.purchased, reserved: b.reserved };
    }
  }
  return { balances, pending: await store.ledger.countPendingHolds() };
}

/** A completion settles after its last byte is sent; give it a moment before judging the holds. */
export async function settledLedger(store: Store, accounts: Readonly<Record<string, string>>): Promise<Ledger> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const ledger = await readLedger(store, accounts);
    if (ledger.pending === 0 || Date.now() > deadline) return ledger;
    await new Promise((r) => setTimeout(r, 5));
  }
}

export const ledgerTotal = (l: Ledger): number => Object.values(l.balances).reduce((s, b) => s + b.earned + b.purchased + b.reserved, 0);
