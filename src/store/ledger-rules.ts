import { assertCount, invalidInput } from './errors.js';
import type { CreditKind, GrantInput, ReserveInput, SettleInput } from './types.js';

/**
 * The ledger's rules that do not depend on a database: input validation, the spending order, how a hold is
 * allocated to grants and how a settle splits it. SQLite takes every decision with them. PostgreSQL
 * validates with them, and its void and reaper use them too, but its reserve and settle restate the
 * spending order, the allocation and the split in SQL (postgres/ledger-functions.ts), to run as one
 * statement each: a change here must be made there too, and the conformance suite runs on both stores.
 */

export function validateGrant(input: GrantInput): void {
  assertCount(input.amount, 'amount', 1);
  if (input.kind === 'earned' && (input.expiresAt === null || !Number.isSafeInteger(input.expiresAt))) {
    throw invalidInput('earned credits need an integer expiresAt (epoch ms)');
  }
  if (input.kind === 'purchased' && input.expiresAt !== null) {
    throw invalidInput('purchased credits do not expire: expiresAt must be null');
  }
}

export function validateReserve(input: ReserveInput): void {
  if (input.holdId.length === 0) throw invalidInput('holdId must not be empty');
  assertCount(input.amount, 'amount', 1);
  assertCount(input.leaseMs, 'leaseMs', 0);
}

/**
 * Checked before any transaction, so a malformed settle throws without touching the hold (which stays
 * pending until settled correctly or reaped). Negative costs are not an error: the contract clamps them to 0.
 * Latency may be fractional (performance.now()); it is rounded when stored.
 */
export function validateSettle(input: SettleInput): void {
  if (!Number.isSafeInteger(input.amount)) throw invalidInput(`amount must be an integer, got ${String(input.amount)}`);
  assertCount(input.usage.promptTokens, 'usage.promptTokens', 0);
  assertCount(input.usage.completionTokens, 'usage.completionTokens', 0);
  assertCount(input.usage.shortfallCredits, 'usage.shortfallCredits', 0);
  assertCount(input.usage.cachedTokens ?? 0, 'usage.cachedTokens', 0);
  assertCount(input.usage.reasoningTokens ?? 0, 'usage.reasoningTokens', 0);
  if (!Number.isFinite(input.usage.latencyMs) || input.usage.latencyMs < 0) {
    throw invalidInput(`usage.latencyMs must be a finite number >= 0, got ${String(input.usage.latencyMs)}`);
  }
}

/**
 * A settle posts at most what was held and never less than zero. Both stores also apply it in SQL, in the
 * statement that settles a hold whose row they read there (sqlite/holds.ts settleIfPending,
 * postgres/ledger-functions.ts); this is the same rule for a hold whose amount the caller knows.
 */
export function chargeFor(requested: number, held: number): number {
  return Math.min(Math.max(requested, 0), held);
}

export interface SpendableGrant {
  grantId: number;
  kind: CreditKind;
  remaining: number;
  expiresAt: number | null;
  createdAt: number;
}

/**
 * Earned credits soonest expiry first (so the fewest expire unused), then purchased oldest first; ties by
 * creation order (the grant id grows with it).
 */
export function bySpendingOrder(a: SpendableGrant, b: SpendableGrant): number {
  const rank = (grant: SpendableGrant) => (grant.kind === 'earned' ? 0 : 1);
  return (
    rank(a) - rank(b) ||
    (a.expiresAt ?? 0) - (b.expiresAt ?? 0) ||
    a.createdAt - b.createdAt ||
    a.grantId - b.grantId
  );
}

export interface Allocation {
  grantId: number;
  amount: number;
}

export type AllocationPlan = { ok: true; allocations: Allocation[] } | { ok: false; available: number };

/** Takes from grants in the given (spending) order until the amount is covered. */
export function allocate(grants: readonly { grantId: number; remaining: number }[], amount: number): AllocationPlan {
  const allocations: Allocation[] = [];
  let missing = amount;
  for (const grant of grants) {
    if (missing === 0) break;
    const take = Math.min(grant.remaining, missing);
    if (take > 0) allocations.push({ grantId: grant.grantId, amount: take });
    missing -= take;
  }
  if (missing > 0) return { ok: false, available: grants.reduce((sum, grant) => sum + grant.remaining, 0) };
  return { ok: true, allocations };
}

export interface AllocationOutcome extends Allocation {
  spent: number;
  released: number;
}

/**
 * Consumes a hold's allocations in allocation order for the charged part, so what goes back to `remaining`
 * is the latest-expiring part, the part most likely still usable.
 */
export function splitCharge(allocations: readonly Allocation[], charged: number): AllocationOutcome[] {
  let toCharge = charged;
  return allocations.map((allocation) => {
    const spent = Math.min(allocation.amount, toCharge);
    toCharge -= spent;
    return { grantId: allocation.grantId, amount: allocation.amount, spent, released: allocation.amount - spent };
  });
}
