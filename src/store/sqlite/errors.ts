import { StoreError } from '../errors.js';

/**
 * SQLite's result codes (libsql's `SqliteError.code`, extended codes included) of a database that cannot
 * take the write now: the disk is full or failing, the file went read-only or away, memory ran out, or
 * another process held the write lock past the busy timeout. Left as they were, they reached a client as a
 * 500 ("internal error") where the PostgreSQL store answers an outage with a 503 to retry; as `unavailable`
 * the meter retries them like a lost reply and the client gets a 503 with Retry-After. A constraint failure
 * (a bug a CHECK caught) or a corrupt file stays what it is.
 *
 * A lock held elsewhere is not marked `contention`, as PostgreSQL's lock timeouts are: there a lock is a
 * row's and the reaper goes on to the next hold, here it is the whole file's, and each next hold would wait
 * out the busy timeout again with the event loop blocked; the pass had better end and the next try later.
 */
const UNUSABLE = ['SQLITE_FULL', 'SQLITE_IOERR', 'SQLITE_READONLY', 'SQLITE_CANTOPEN', 'SQLITE_NOMEM', 'SQLITE_BUSY', 'SQLITE_LOCKED'];

function inFamily(code: string): boolean {
  return UNUSABLE.some((family) => code === family || code.startsWith(`${family}_`));
}

/** A driver error as the Store reports it: `unavailable` for the codes above, anything else as it was. */
export function asStoreError(error: unknown): unknown {
  if (!(error instanceof Error) || !('code' in error) || typeof error.code !== 'string' || !inFamily(error.code)) return error;
  return new StoreError('unavailable', `SQLite cannot take the write now (${error.code}): ${error.message}`);
}
