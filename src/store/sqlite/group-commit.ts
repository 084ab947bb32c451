/**
 * Group commit: the ledger writes of many concurrent requests share one SQLite transaction.
 *
 * A COMMIT in WAL mode costs about 80 us on these machines whatever it holds (it appends the frames and
 * updates the WAL index), against 3 to 4 us per statement; with two transactions per request (reserve and
 * settle) the commits alone were a third of the store's time (docs/performance.md). Here the writes asked
 * for in one event-loop turn are queued, and on the next turn (setImmediate) they run one after the other,
 * in the order asked, inside one transaction, which then commits.
 *
 * Run together rather than each when asked: between two writes of a request the gateway parses HTTP, calls
 * the upstream and builds answers, which leaves SQLite's code and pages cold in the CPU's caches, and each
 * statement then cost about twice what it costs among its peers (docs/performance.md, tenth session). The
 * caller waited for the COMMIT of the next turn anyway, so no answer comes later for it.
 *
 * Reads of the hot path (a request's key) join the group too (read()); a group of reads alone, which is a
 * quiet gateway's, runs them each on its own, without a transaction: BEGIN IMMEDIATE and its COMMIT cost a
 * read alone more than the read.
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
 * nothing smaller than the group to undo, so the writes run so far roll back with it: the write that threw
 * gets its error, and the earlier ones run again, before those still queued, in a new transaction (unless
 * SQLite rolled back itself, on a full or failing disk, or the group has spent its reruns: then they hear
 * `unavailable`). Nothing half-written is ever committed and nobody acts on a rolled-back write. Rows a
 * write leaves for the group's end (SqliteConnection.atCommit: journal rows, usage events, counters) are
 * written just before the COMMIT; if one is refused there, the group's writes are run again one transaction
 * each, and only the write that left it fails.
 */
import type Database from 'libsql';
import { StoreError } from '../errors.js';
import { asStoreError } from './errors.js';

type Db = Database.Database;

interface Queued {
  fn: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

interface Ran {
  queued: Queued;
  result: unknown;
}

/** What the group needs of its connection. */
export interface GroupHooks {
  /** Rows changed by the connection's statements so far: tells whether a write that threw had written. */
  changes(): number;
  /** Runs the work the group's writes left for its end (database.ts, atCommit), just before its COMMIT. */
  beforeCommit(): void;
  /** Tells the group's writes that asked (database.ts, afterCommit) that their COMMIT succeeded. */
  committed(): void;
  /** Drops that work, and those callbacks, when the writes that left them were rolled back. */
  rolledBack(): void;
}

/** A write's caller hears a database it cannot use now as `unavailable` (errors.ts), anything else as it was. */
function fail(queued: Queued, error: unknown): void {
  queued.reject(asStoreError(error));
}

export class GroupCommit {
  private queue: Queued[] = [];
  /** Writes in `queue`: with none, its reads run without a transaction. */
  private writes = 0;

  constructor(
    private readonly db: Db,
    private readonly hooks: GroupHooks,
    /** When the queued writes run and commit; the next event-loop turn unless a test says otherwise. */
    private readonly schedule: (commit: () => void) => void = (commit) => void setImmediate(commit),
  ) {}

  /** Queues fn for the next group and resolves with its result once that group committed. */
  run<T>(fn: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.queue.length === 0) this.schedule(() => this.commitScheduled());
      this.writes += 1;
      this.queue.push({ fn, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  /**
   * Queues a read (fn writes nothing) for the next group: among writes it runs in their transaction, at the
   * cost of a statement among its peers; in a group of reads alone (a quiet gateway: one request's key read)
   * each runs on its own, without the BEGIN IMMEDIATE and COMMIT a transaction would add to it.
   */
  read<T>(fn: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.queue.length === 0) this.schedule(() => this.commitScheduled());
      this.queue.push({ fn, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  /** Runs and commits the queued writes now (before a transaction of its own, or closing). */
  flush(): void {
    this.commitScheduled();
  }

  /**
   * The group's commit, run from setImmediate (where an exception would end the process with every request
   * in flight) or by flush (where it would leave the queued writes unanswered and the transaction open for
   * the caller's BEGIN to fail on). Nothing below is meant to throw (each statement's error is its write's;
   * each ROLLBACK is guarded); should something still (a bug), the group's writes hear it, the transaction is
   * rolled back, and the process goes on. Rejecting a promise that was settled already does nothing.
   */
  private commitScheduled(): void {
    const queue = this.queue;
    try {
      this.commit();
    } catch (error) {
      this.rollBack();
      this.hooks.rolledBack();
      for (const q of queue) fail(q, error);
    }
  }

  /**
   * ROLLBACK if the transaction is still open (SQLite ends it itself on some errors: SQLITE_FULL, an I/O
   * error). A ROLLBACK that fails too (the same disk) must neither hide the error being handled nor escape
   * the commit: the next BEGIN reports the connection's state to the writes that come next.
   */
  private rollBack(): void {
    try {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
    } catch {
      // Nothing more to do here: see above.
    }
  }

  private commit(): void {
    const queue = this.queue;
    if (queue.length === 0) return;
    this.queue = [];
    const writes = this.writes;
    this.writes = 0;
    if (writes === 0) {
      for (const queued of queue) {
        try {
          queued.resolve(queued.fn());
        } catch (error) {
          fail(queued, error);
        }
      }
      return;
    }
    let ran: Ran[] = [];
    try {
      this.db.exec('BEGIN IMMEDIATE');
    } catch (error) {
      for (const q of queue) fail(q, error);
      return;
    }
    let work = queue;
    /** Reruns this group may still spend: at most as many as its writes, so it costs at most twice them. */
    let budget = queue.length;
    for (let i = 0; i < work.length; i++) {
      const queued = work[i] as Queued;
      const before = this.hooks.changes();
      try {
        ran.push({ queued, result: queued.fn() });
      } catch (error) {
        fail(queued, error);
        if (this.db.inTransaction && this.hooks.changes() === before) continue;
        // A write that changed rows before it threw cannot be undone alone: the writes run so far go with it.
        // They are innocent and nothing of them remains, so they run again, first, in a new transaction with
        // the rest: against the same books as before, they write what they wrote. (Failing them, for their
        // callers to retry, answered a bug in one write with "ledger unavailable" in the others.) Not when
        // SQLite rolled the transaction back itself (SQLITE_FULL, SQLITE_IOERR): run again, they would meet the
        // same disk, one by one; nor past the budget, which a group of many failing writes would otherwise
        // spend quadratically with the event loop blocked. Those hear `unavailable`.
        const sqliteRolledBack = !this.db.inTransaction;
        this.rollBack();
        this.hooks.rolledBack();
        let again = ran.map((r) => r.queued);
        if (sqliteRolledBack || again.length > budget) {
          const abandoned = new StoreError(
            'unavailable',
            sqliteRolledBack
              ? `SQLite rolled the group's transaction back: ${String(error)}`
              : `a write of the same group failed after writing, so the group was rolled back: ${String(error)}`,
            false,
            // The disk that refused the one will refuse the others: their request's retries would only wait.
            sqliteRolledBack,
          );
          for (const q of again) fail(q, abandoned);
          again = [];
        }
        budget -= again.length;
        work = [...again, ...work.slice(i + 1)];
        i = -1;
        ran = [];
        try {
          this.db.exec('BEGIN IMMEDIATE');
        } catch (beginError) {
          for (const q of work) fail(q, beginError);
          return;
        }
      }
    }
    try {
      this.hooks.beforeCommit();
    } catch {
      // A row the writes left for the end (a journal row, a usage event, a counter: database.ts, atCommit)
      // was refused, and which write left it is not known: each write runs again in a transaction of its
      // own, so only the one whose row is refused fails, as it would have had it written the row itself.
      this.rollBack();
      this.hooks.rolledBack();
      for (let i = 0; i < ran.length; i++) {
        const beginError = this.runAlone((ran[i] as Ran).queued);
        // The lock could not be had (another process holds it past the busy timeout): the rest would each
        // wait as long, with the event loop blocked, to fail the same way.
        if (beginError !== null) {
          for (const r of ran.slice(i + 1)) fail(r.queued, beginError);
          return;
        }
      }
      return;
    }
    try {
      this.db.exec('COMMIT');
    } catch (error) {
      this.rollBack();
      this.hooks.rolledBack();
      for (const r of ran) fail(r.queued, error);
      return;
    }
    this.hooks.committed();
    for (const r of ran) r.queued.resolve(r.result);
  }

  /**
   * One write in a transaction of its own (its first run was rolled back with its group: nothing of it
   * remains). Returns the error of a BEGIN that failed (the write is rejected with it), else null.
   */
  private runAlone(queued: Queued): unknown {
    try {
      this.db.exec('BEGIN IMMEDIATE');
    } catch (error) {
      fail(queued, error);
      return error;
    }
    try {
      const result = queued.fn();
      this.hooks.beforeCommit();
      this.db.exec('COMMIT');
      this.hooks.committed();
      queued.resolve(result);
    } catch (error) {
      this.rollBack();
      this.hooks.rolledBack();
      fail(queued, error);
    }
    return null;
  }
}
