import { StoreError } from '../errors.js';

/**
 * SQLite's result codes (libsql's `SqliteError.code`, extended codes included) of a database that cannot be
 * used now: the disk is full or failing, the file went read-only or away, memory ran out, or another process
 * held the write lock past the busy timeout. Left as they were, they reached a client as a 500 ("internal
 * error") where the PostgreSQL store answers an outage with a 503 to retry; as `unavailable` the client gets
 * a 503 with Retry-After, and a settle after its answer is retried in the background. They are `lasting`:
 * none clears within the request's own retries (a busy wait alone outlasts them), so those give up at once.
 *
 * Not mapped: a constraint failure (a bug a CHECK caught), a corrupt file (SQLITE_CORRUPT, and the I/O
 * codes that report corruption), SQLITE_LOCKED (a conflict within this process's own connection: a bug).
 * A lock held elsewhere is not marked `contention`, as PostgreSQL's lock timeouts are: there a lock is a
 * row's and the reaper goes on to the next hold, here it is the whole file's, and each next hold would wait
 * out the busy timeout again with the event loop blocked; the pass had better end and the next try later.
 */
const UNUSABLE = ['SQLITE_FULL', 'SQLITE_IOERR', 'SQLITE_READONLY', 'SQLITE_CANTOPEN', 'SQLITE_NOMEM', 'SQLITE_BUSY'];
const CORRUPTION = new Set(['SQLITE_IOERR_CORRUPTFS', 'SQLITE_IOERR_DATA']);

function inFamily(code: string): boolean {
  return !CORRUPTION.has(code) && UNUSABLE.some((family) => code === family || code.startsWith(`${family}_`));
}

/** A driver error as the Store reports it: `unavailable` for the codes above, anything else as it was. */
export function asStoreError(error: unknown): unknown {
  if (!(error instanceof Error) || !('code' in error) || typeof error.code !== 'string' || !inFamily(error.code)) return error;
  return new StoreError('unavailable', `SQLite cannot be used now (${error.code}): ${error.message}`, false, true);
}
