/**
 * Group commit: the ledger writes of many concurrent requests share one SQLite transaction.
 *
 * A COMMIT in WAL mode costs about 80 us on these machines whatever it holds (it appends the frames and
 * updates the WAL index), against 3 to 4 us per statement; with two transactions per request (reserve and
 * settle) the commits alone were a third of the store's time (docs/performance.md). Here the first write of
 * an event-loop turn opens a transaction, every write of that turn joins it, and the transaction commits on
 * the next turn (setImmediate).
 *
 * Nothing is weakened: every write still runs its checks and its changes synchronously, in order, against
 * everything written before it (one connection, one writer), and its promise resolves only after the COMMIT
 * that holds it. A caller never acts on a write that is not committed; if the COMMIT fails, every write of
 * the group is rolled back and every caller gets the error.
 *
 * No SAVEPOINT per write: one cost about 11 us a write (the statement and the sub-journal it keeps of every
 * page the write touches), a tenth of the store's time per request. The writes of the store refuse before
 * they write (every check runs before the first change), so a write that throws has almost always written
 * nothing, and the group goes on without it. The connection counts the rows its statements change
 * (`changes`): if a write throws after changing some (a bug caught by a CHECK, a foreign key), there is
 * nothing smaller than the group to undo, so the whole group rolls back; the write that threw gets its
 * error and every other write of the group gets `unavailable`, which its caller retries (every ledger call
 * is idempotent), so nothing half-written is ever committed and nobody acts on a rolled-back write.
 */
import type Database from 'libsql';
import { StoreError } from '../errors.js';

type Db = Database.Database;

interface Waiter {
  resolve: () => void;
  reject: (error: unknown) => void;
}

export class GroupCommit {
  private waiters: Waiter[] = [];
  private open = false;

  constructor(
    private readonly db: Db,
    /** Rows changed by the connection's statements so far: tells whether a write that threw had written. */
    private readonly changes: () => number,
    /** When the open group commits; the next event-loop turn unless a test says otherwise. */
    private readonly schedule: (commit: () => void) => void = (commit) => void setImmediate(commit),
  ) {}

  /** Runs fn in the open group (opening one if none) and resolves with its result once the group committed. */
  run<T>(fn: () => T): Promise<T> {
    let result: T;
    try {
      if (!this.open) {
        this.db.exec('BEGIN IMMEDIATE');
        this.open = true;
        this.schedule(() => this.commit());
      }
      result = this.step(fn);
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise<T>((resolve, reject) => {
      this.waiters.push({ resolve: () => resolve(result), reject });
    });
  }

  /** Commits the open group now (before a transaction of its own, or closing). */
  flush(): void {
    if (this.open) this.commit();
  }

  private step<T>(fn: () => T): T {
    const before = this.changes();
    try {
      return fn();
    } catch (error) {
      // Some errors (SQLITE_FULL, SQLITE_IOERR) make SQLite roll the whole transaction back itself; a write
      // that changed rows before it threw cannot be undone alone. Either way the group's earlier writes are
      // gone or must go, and their callers must hear it.
      if (!this.db.inTransaction || this.changes() !== before) this.abandon(error);
      throw error;
    }
  }

  private commit(): void {
    if (!this.open) return;
    const waiters = this.waiters;
    try {
      this.db.exec('COMMIT');
    } catch (error) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      this.fail(error);
      return;
    }
    this.open = false;
    this.waiters = [];
    for (const w of waiters) w.resolve();
  }

  /** Rolls the open group back for a write that threw after writing; its other writes are retried by their callers. */
  private abandon(cause: unknown): void {
    if (this.db.inTransaction) this.db.exec('ROLLBACK');
    this.fail(
      new StoreError('unavailable', `a write of the same group failed after writing, so the group was rolled back: ${String(cause)}`),
    );
  }

  private fail(error: unknown): void {
    const waiters = this.waiters;
    this.open = false;
    this.waiters = [];
    for (const w of waiters) w.reject(error);
  }
}
