/**
 * Version 10: holds_pending_by_owner covers the held amount. Every settle reports the balance (grants.ts,
 * balanceOf), whose reserved part sums the account's pending holds: through the old index each of them cost
 * a lookup of its row for `amount`, one per request in flight on the account (32 under the bench's load, one
 * account). The index is partial, so it holds only pending holds and rebuilding it reads only those.
 */
export const schemaV10 = `
DROP INDEX holds_pending_by_owner;
CREATE INDEX holds_pending_by_owner ON holds (account_id, environment, amount) WHERE status = 'pending';
`;
