/**
 * The reaper's pass with its failures isolated. A pass voids every due hold and writes off expired grants
 * in one transaction; a hold that cannot be voided (books a manual edit or a bug left inconsistent, so that
 * returning its credits breaks a grant's CHECK) made that transaction fail on every pass, and since the pass
 * takes the oldest leases first, that one hold stopped the reaper for good: every other stale hold kept its
 * credits reserved. When the whole pass fails for any reason but an unreachable database (a lock or
 * statement timeout counts as a failure, not as the database being away), each due hold is
 * voided in a transaction of its own, listing past the ones that fail, and the write-offs run in another:
 * what can be done is done, and what cannot is named (ReapIncomplete) for the operator, pass after pass,
 * until the books are repaired. While a pass had holds it could not void, the next passes go piece by
 * piece at once rather than failing the whole pass first.
 */
import { StoreError } from './errors.js';

/** What a store's reaper does, in the pieces the isolated pass needs. */
export interface ReapSteps {
  /** The whole pass in one transaction: the holds voided. */
  batch(): Promise<number>;
  /** Up to the pass's limit of the holds it would void, oldest lease first, leaving out `skip`. */
  dueHoldIds(skip: readonly string[]): Promise<string[]>;
  /** One hold, in its own transaction, if it is still pending and due: whether it was voided. */
  voidIfDue(holdId: string): Promise<boolean>;
  /** The pass's write-offs of expired grants, in their own transaction. */
  expireGrants(): Promise<void>;
}

/** A pass whose one transaction failed: what it did piece by piece, and what it could not do. */
export class ReapIncomplete extends Error {
  override readonly name = 'ReapIncomplete';
  constructor(
    /** Holds voided by the pass despite the failures. */
    readonly voided: number,
    /** The holds that could not be voided, each with why. */
    readonly failedHolds: readonly { holdId: string; error: string }[],
    /** Why the write-off of expired grants failed, if it did. */
    readonly expiryError: string | null,
    /** Why the pass as one transaction failed (null when it was not tried: an earlier pass had failures). */
    readonly batchError: string | null,
    /**
     * The database stopped answering in the middle of the pass: it ended there and the next one goes on. Set
     * only when the pass had something to report by then (holds voided or found stuck), so that it reaches
     * the metric and the log; otherwise the pass fails with the database's own error.
     */
    readonly interrupted: string | null = null,
  ) {
    super(
      (batchError === null
        ? `the reaper's pass, hold by hold since an earlier one left holds it could not void, voided ${voided} holds`
        : `the reaper's pass failed as one transaction (${batchError}); hold by hold it voided ${voided} holds`) +
        (failedHolds.length > 0 ? `, could not void ${failedHolds.length} (first: ${failedHolds.slice(0, 3).map((f) => `${f.holdId}: ${f.error}`).join('; ')})` : '') +
        (expiryError !== null ? `, and writing off expired grants failed: ${expiryError}` : '') +
        (interrupted !== null ? `; then the database stopped answering (${interrupted}) and the pass ended there` : ''),
    );
  }
}

const WHY_STUCK =
  'a CHECK or constraint failure means inconsistent books, which `svc-gateway ledger verify` names; a lock or statement timeout, a row held too long';

/** At most this many failed holds are named in a log line: the rest are counted. */
const NAMED_FAILURES = 10;

/** How a runtime logs a ReapIncomplete: an error while something could not be done, else a warning. */
export function reapIncompleteLine(e: ReapIncomplete): { level: 'warn' | 'error'; msg: string; fields: Record<string, unknown> } {
  const failed = e.failedHolds.length > 0 || e.expiryError !== null;
  return {
    // An outage in the middle of a pass is logged as loudly as one that fails a pass before it starts (the
    // Node server's "hold reaper failed").
    level: failed || e.interrupted !== null ? 'error' : 'warn',
    msg: failed
      ? `the hold reaper could not do all of its pass (${e.interrupted !== null ? 'then the database stopped answering and the next pass goes on' : 'the rest was done'}): ${WHY_STUCK}`
      : e.interrupted !== null
        ? "the hold reaper's pass, done piece by piece, ended when the database stopped answering; the next pass goes on"
        : "the hold reaper's pass failed as one transaction and was done piece by piece",
    fields: {
      voided: e.voided,
      failedHoldCount: e.failedHolds.length,
      failedHolds: e.failedHolds.slice(0, NAMED_FAILURES),
      expiryError: e.expiryError,
      batchError: e.batchError,
      interrupted: e.interrupted,
    },
  };
}

/** The database cannot be reached: the pass stops and the next one tries again. */
function transient(error: unknown): boolean {
  return error instanceof StoreError && error.code === 'unavailable' && !error.contention;
}

/** One store's reaper: remembers whether its last pass left holds it could not void. */
export class IsolatedReaper {
  private stuck = false;

  /** The holds voided; throws ReapIncomplete after a pass that did not go as one transaction. */
  async reap(steps: ReapSteps): Promise<number> {
    let batchError: string | null = null;
    if (!this.stuck) {
      try {
        return await steps.batch();
      } catch (error) {
        if (transient(error)) throw error;
        batchError = String(error);
      }
    }
    let voided = 0;
    const failedHolds: { holdId: string; error: string }[] = [];
    /**
     * The database went away in the middle of the pass: it ends there and the next one goes on. What it did
     * stays done, so it is reported (voided holds counted, stuck ones named and remembered) rather than lost
     * with the pass; with nothing to report, the database's own error, as for a pass that never started.
     */
    const cut = (error: unknown): unknown => {
      if (failedHolds.length > 0) this.stuck = true;
      if (voided === 0 && failedHolds.length === 0) return error;
      return new ReapIncomplete(voided, failedHolds, null, batchError, String(error));
    };
    // Listed again past the holds that failed, so that a page of them does not hide the due holds behind it;
    // a listing whose holds all went through ends the pass, as the one transaction's limit would.
    for (;;) {
      const failedBefore = failedHolds.length;
      let due: string[];
      try {
        due = await steps.dueHoldIds(failedHolds.map((f) => f.holdId));
      } catch (error) {
        throw transient(error) ? cut(error) : error;
      }
      for (const holdId of due) {
        try {
          if (await steps.voidIfDue(holdId)) voided += 1;
        } catch (error) {
          if (transient(error)) throw cut(error);
          failedHolds.push({ holdId, error: String(error) });
        }
      }
      if (failedHolds.length === failedBefore) break;
    }
    let expiryError: string | null = null;
    try {
      await steps.expireGrants();
    } catch (error) {
      if (transient(error)) throw cut(error);
      expiryError = String(error);
    }
    this.stuck = failedHolds.length > 0;
    // Piece by piece only because an earlier pass was stuck, and nothing is any longer: the books were repaired.
    if (batchError === null && failedHolds.length === 0 && expiryError === null) return voided;
    throw new ReapIncomplete(voided, failedHolds, expiryError, batchError);
  }
}
