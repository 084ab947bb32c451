/**
 * Group commit: the ledger writes of many concurrent requests share one SQLite transaction.
 *
 * A COMMIT in WAL mode costs about 80 us on these machines whatever it holds (it appends the frames and
 * updates the WAL index), against 3 to 4 us per statement; with two transactions per request (reserve and
 * settle) the commits alone were a third of the store's time (docs/performance.md). Here the first write of
 * an event-loop turn opens a transaction, every write of that turn joins it, each inside its own SAVEPOINT
 * so a write that throws undoes only itself, and the transaction commits on the next turn (setImmediate).
 *
 * Nothing is weakened: every write still runs its checks and its changes synchronously, in order, against
 * everything written before it (one connection, one writer), and its promise resolves only after the COMMIT
 * that holds it. A caller never acts on a write that is not committed; if the COMMIT fails, every write of
 * the group is rolled back and every caller gets the error.
 */
import type Database from 'libsql';

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
    this.db.exec('SAVEPOINT group_step');
    try {
      const result = fn();
      this.db.exec('RELEASE group_step');
      return result;
    } catch (error) {
      if (this.db.inTransaction) {
        this.db.exec('ROLLBACK TO group_step');
        this.db.exec('RELEASE group_step');
      } else {
        // Some errors (SQLITE_FULL, SQLITE_IOERR) make SQLite roll the whole transaction back: the earlier
        // writes of the group are gone too, so their callers must hear it.
        this.fail(error);
      }
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

  private fail(error: unknown): void {
    const waiters = this.waiters;
    this.open = false;
    this.waiters = [];
    for (const w of waiters) w.reject(error);
  }
}
