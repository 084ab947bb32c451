// A bound, not a mode: preloaded into the gateway process (`node --import`), this makes the ledger's
// reserve, settle, void and renewHold answer at once without touching the database, on both stores. Everything else
// runs as in production: authentication still reads the key row, the request is validated, routed, sent
// upstream, parsed and answered with its `svc` metadata. What the gateway reaches like this is the most
// any ledger design could give it, which tells whether a throughput goal is a storage problem or not
// (docs/performance.md, "The run of 2026-11-25" and "Why the remaining goals are out of reach").
//
//   node bench/overhead.mjs --stores sqlite --free-ledger
//
// Never used outside bench/: nothing is charged and no usage is recorded while it is loaded.
import { SqliteLedgerStore } from '../../dist/store/sqlite/ledger.js';
import { PostgresLedgerStore } from '../../dist/store/postgres/ledger.js';

const balance = { accountId: 'bench', environment: 'live', earned: 0, earnedNextExpiry: null, purchased: 1_000_000_000, reserved: 0 };

for (const Store of [SqliteLedgerStore, PostgresLedgerStore]) {
  Store.prototype.reserve = async (input) => ({ ok: true, holdId: input.holdId, amount: input.amount, leaseExpiresAt: 0, status: 'pending' });
  Store.prototype.settle = async (input) => ({ status: 'settled', charged: input.amount, balance });
  Store.prototype.void = async () => true;
  Store.prototype.renewHold = async () => true;
}
