/**
 * The reaper's pass with its failures isolated. A pass voids every due hold and writes off expired grants
 * in one transaction; a hold that cannot be voided (books a manual edit or a bug left inconsistent, so that
 * returning its credits breaks a grant's CHECK) made that transaction fail on every pass, and since the pass
 * takes the oldest leases first, that one hold stopped the reaper for good: every other stale hold kept its
 * credits reserved. When the whole pass fails for any reason but an unreachable database, each due hold is
 * voided in a transaction of its own, and the write-offs in another: what can be done is done, and what
 * cannot is named (ReapIncomplete) for the operator, pass after pass, until the books are repaired.
 */
import { StoreError } from './errors.js';

/** What a store's reaper does, in the pieces the isolated pass needs. */
export interface ReapSteps {
  /** The whole pass in one transaction: the holds voided. */
  batch(): Promise<number>;
  /** The holds the pass would void, oldest lease first. */
  dueHoldIds(): Promise<string[]>;
  /** One hold, in its own transaction, if it is still pending and due: whether it was voided. */
  voidIfDue(holdId: string): Promise<boolean>;
  /** The pass's write-offs of expired grants, in their own transaction. */
  expireGrants(): Promise<void>;
}

/** A pass that voided what it could and could not void some holds, or write off the expired grants. */
export class ReapIncomplete extends Error {
  override readonly name = 'ReapIncomplete';
  constructor(
    /** Holds voided by the pass despite the failures. */
    readonly voided: number,
    /** The holds that could not be voided, each with why. */
    readonly failedHolds: readonly { holdId: string; error: string }[],
    /** Why the write-off of expired grants failed, if it did. */
    readonly expiryError: string | null,
  ) {
    super(
      `the reaper voided ${voided} holds but could not void ${failedHolds.length}` +
        (failedHolds.length > 0 ? ` (${failedHolds.map((f) => `${f.holdId}: ${f.error}`).join('; ')})` : '') +
        (expiryError !== null ? `; writing off expired grants failed: ${expiryError}` : ''),
    );
  }
}

/** What a runtime logs, as an error, with a ReapIncomplete's holds and expiry error. */
export const REAP_INCOMPLETE_MESSAGE =
  'the hold reaper could not void some due holds (the rest were voided): their books are inconsistent; `svc-gateway ledger verify` names what to repair';

function transient(error: unknown): boolean {
  return error instanceof StoreError && error.code === 'unavailable';
}

/** The holds voided; throws ReapIncomplete when some work could not be done, and rethrows a transient failure. */
export async function reapIsolatingFailures(steps: ReapSteps): Promise<number> {
  try {
    return await steps.batch();
  } catch (error) {
    if (transient(error)) throw error;
  }
  let voided = 0;
  const failedHolds: { holdId: string; error: string }[] = [];
  for (const holdId of await steps.dueHoldIds()) {
    try {
      if (await steps.voidIfDue(holdId)) voided += 1;
    } catch (error) {
      if (transient(error)) throw error;
      failedHolds.push({ holdId, error: String(error) });
    }
  }
  let expiryError: string | null = null;
  try {
    await steps.expireGrants();
  } catch (error) {
    if (transient(error)) throw error;
    expiryError = String(error);
  }
  // Every piece may succeed alone (the batch's failure was its own, or is gone): then the pass is done.
  if (failedHolds.length > 0 || expiryError !== null) throw new ReapIncomplete(voided, failedHolds, expiryError);
  return voided;
}
