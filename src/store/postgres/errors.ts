import postgres from 'postgres';
import { StoreError } from '../errors.js';
import { SilenceWatch } from '../../core/silence-deadline.js';

/** SQLSTATE of a driver error, with the constraint it names and its DETAIL, if any. */
export function pgError(error: unknown): { code: string; constraint: string | undefined; detail: string | undefined } | null {
  if (!(error instanceof postgres.PostgresError)) return null;
  return { code: error.code, constraint: error.constraint_name, detail: error.detail };
}

export const UNIQUE_VIOLATION = '23505';
export const FOREIGN_KEY_VIOLATION = '23503';

/** Driver and socket error codes that mean "no usable connection", as opposed to a statement that failed. */
const CONNECTION_CODES = new Set([
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** SQLSTATEs of a server that is going away, starting up or full: retrying later may succeed. */
function isTransientServerState(code: string): boolean {
  return code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300';
}

/**
 * SQLSTATEs of a transaction the server ended for contention or on someone's order: a deadlock victim
 * (40P01), a serialization failure (40001), a lock not had within `lock_timeout` (55P03), a statement
 * cancelled by `statement_timeout` or pg_cancel_backend (57014). Each rolls back everything the transaction
 * did, so the retry callers make of an `unavailable` (every ledger call is idempotent by hold id) starts
 * clean; left as they were, they reached a client as a 500 and the reaper as books it could not repair. The
 * server answered, though: they prove it is there.
 */
function isContention(code: string): boolean {
  return code === '40001' || code === '40P01' || code === '55P03' || code === '57014';
}

/** Whether the database could not be reached or is going away (not merely busy). */
function isUnreachable(error: unknown): boolean {
  if (error instanceof postgres.PostgresError) return isTransientServerState(error.code);
  return error instanceof Error && 'code' in error && typeof error.code === 'string' && CONNECTION_CODES.has(error.code);
}

function isUnavailable(error: unknown): boolean {
  return isUnreachable(error) || (error instanceof postgres.PostgresError && isContention(error.code));
}

/**
 * How long PostgreSQL may stay silent (no operation of this process answered) before an operation waiting on
 * it is given up. The driver queues statements while it reconnects, and a server that accepts connections and
 * drops them (a proxy or a container port in front of a stopped database) keeps it reconnecting without ever
 * failing them: without a bound, every request would wait for the database to come back. The bound is on
 * silence, not on one operation's wait, so a burst queued on the pool behind a busy database is not failed
 * while the database keeps answering; OPERATION_HARD_BOUND_MS caps the wait whatever the others do.
 */
const OPERATION_DEADLINE_MS = 5_000;
const OPERATION_HARD_BOUND_MS = 20_000;

const databaseSilence = new SilenceWatch();

/**
 * "Too many clients" (53300) is PostgreSQL refusing a connection at its startup, so the operation never ran
 * and may simply be tried again. A burst wider than the server's max_connections (Workers open a connection
 * per request: without a pooler such as Hyperdrive in front, 500 concurrent requests meet a limit of 100)
 * then waits for a slot, as it would behind a pooler, instead of being answered 503.
 *
 * The retries of every waiting operation of this process (or Worker isolate) take turns, one every
 * CAPACITY_RETRY_SPACING_MS: each refused attempt costs the server a backend started and stopped, so 500
 * waiters retrying each on its own backoff spent the database's CPU on refusals. (Spacing that grew with
 * each refusal was tried: the first burst's refusals stretched it so far that slots freed faster than turns
 * came.) Only numbers are shared between requests, no promise (a Worker may not wait on another request's).
 */
const TOO_MANY_CONNECTIONS = '53300';
/**
 * How long an operation may wait for a slot: a queue, not an outage (PostgreSQL answers every attempt), so
 * longer than the silence bounds, as a pooler's queue is (pgbouncer's query_wait_timeout defaults to 120 s).
 */
const CAPACITY_WAIT_MS = 60_000;
const CAPACITY_RETRY_SPACING_MS = 10;
let nextCapacityRetryAt = 0;

/**
 * How long this refused operation waits before its next attempt: the next free turn, with a little jitter;
 * null when that turn falls past `deadline` (the turn is then not taken, so it delays nobody).
 */
function capacityRetryDelay(deadline: number): number | null {
  const now = performance.now();
  const at = Math.max(now, nextCapacityRetryAt) + Math.random() * CAPACITY_RETRY_SPACING_MS;
  if (at >= deadline) return null;
  nextCapacityRetryAt = at + CAPACITY_RETRY_SPACING_MS;
  return at - now;
}

/** A retried operation got its connection: later turns start from now, not from a queue built while refused. */
function capacityRecovered(): void {
  nextCapacityRetryAt = Math.min(nextCapacityRetryAt, performance.now() + CAPACITY_RETRY_SPACING_MS);
}

function refusedForCapacity(error: unknown): boolean {
  return error instanceof postgres.PostgresError && error.code === TOO_MANY_CONNECTIONS;
}

/**
 * Runs one store operation and turns "the database is unreachable" (or silent for OPERATION_DEADLINE_MS)
 * into StoreError('unavailable'), which the gateway answers with 503 and Retry-After. Safe for every
 * operation: if the connection dropped during COMMIT, or the operation was given up on and runs once the
 * database is back, the outcome is unknown, but a retried reserve returns the hold it may have made (hold
 * ids are idempotency keys), a retried settle or void is a no-op once final, and an orphaned hold is reaped
 * after its lease. A connection refused for capacity is retried for up to CAPACITY_WAIT_MS.
 */
export async function guard<T>(operation: () => Promise<T>): Promise<T> {
  const deadline = performance.now() + CAPACITY_WAIT_MS;
  for (let attempt = 0; ; attempt++) {
    try {
      const result = await guardOnce(operation);
      if (attempt > 0) capacityRecovered();
      return result;
    } catch (error) {
      const delay = refusedForCapacity(error) ? capacityRetryDelay(deadline) : null;
      if (delay === null) throw asStoreError(error);
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

function guardOnce<T>(operation: () => Promise<T>): Promise<T> {
  const pending = operation();
  const watched = databaseSilence.within(
    pending,
    OPERATION_DEADLINE_MS,
    OPERATION_HARD_BOUND_MS,
    (waited) => new StoreError('unavailable', `PostgreSQL did not answer within ${Math.round(waited)} ms`),
    (e) => !isUnreachable(e) || refusedForCapacity(e),
  );
  // Given up on: its own failure, when it comes, has nobody left to hear it.
  watched.catch(() => pending.catch(() => undefined));
  return watched;
}

function asStoreError(error: unknown): unknown {
  if (isUnreachable(error)) {
    return new StoreError('unavailable', `PostgreSQL is unreachable: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (isUnavailable(error)) {
    return new StoreError('unavailable', `PostgreSQL ended the transaction, to be tried again: ${error instanceof Error ? error.message : String(error)}`, true);
  }
  return error;
}
