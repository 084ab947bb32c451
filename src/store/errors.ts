/**
 * Errors a Store throws for caller mistakes (as opposed to business outcomes such as insufficient credits,
 * which are returned as values), and `unavailable` when the database cannot be reached (the gateway answers
 * 503 and the client may retry). Both implementations throw these so callers can map them without knowing
 * the database behind the Store.
 */
export type StoreErrorCode = 'conflict' | 'not_found' | 'invalid_input' | 'unavailable' | 'limit_exceeded';

export class StoreError extends Error {
  override readonly name = 'StoreError';
  constructor(
    readonly code: StoreErrorCode,
    message: string,
    /**
     * An `unavailable` the database answered with: it ended the transaction for contention or a timeout
     * (PostgreSQL's deadlock, serialization failure, lock or statement timeout). Retried like any
     * `unavailable`, but the database is there: the reaper fails that one hold rather than the whole pass,
     * and the logs say it at error level, since the ledger's lock order is meant to prevent deadlocks.
     */
    readonly contention = false,
    /**
     * An `unavailable` that trying again within a second or two will not cure: SQLite's full or failing disk,
     * a read-only file, a write lock another process held past the busy timeout (sqlite/errors.ts). The
     * request's own retries (withLedgerRetries) give up at once, for a prompt 503 rather than one three
     * seconds later; what retries in the background (a settle after its answer) still does.
     */
    readonly lasting = false,
  ) {
    super(message);
  }
}

export function invalidInput(message: string): StoreError {
  return new StoreError('invalid_input', message);
}

/** Credits and token counts are whole numbers: a fractional or unsafe value is a caller bug, not a cost. */
export function assertCount(value: number, field: string, min: number): void {
  if (!Number.isSafeInteger(value) || value < min) {
    throw invalidInput(`${field} must be an integer >= ${min}, got ${String(value)}`);
  }
}

export function tooManyKeys(accountId: string, limit: number): StoreError {
  return new StoreError('limit_exceeded', `account ${accountId} already has ${limit} active API keys`);
}
