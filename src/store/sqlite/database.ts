import Database from 'libsql';
import { GroupCommit } from './group-commit.js';
import { asStoreError } from './errors.js';

type Db = Database.Database;
type Statement = Database.Statement<SqlParam[]>;
/** Uint8Array binds as a BLOB (idempotency.ts stores response bodies as UTF-8 bytes). */
export type SqlParam = string | number | bigint | null | Uint8Array;

/** How long a writer waits for another connection's lock (e.g. the CLI writing while the server runs). */
export const BUSY_TIMEOUT_MS = 5_000;

/**
 * Opens a connection with the pragmas the ledger relies on. WAL lets readers run while one writer commits;
 * synchronous=NORMAL trades the last commits on power loss (never corruption) for fewer fsyncs, see
 * docs/ledger.md. foreign_keys is per connection in SQLite and off by default, so it is set on every open.
 */
export function openSqliteDatabase(path: string): Db {
  const db = new Database(path, { timeout: BUSY_TIMEOUT_MS });
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  } catch (error) {
    // WAL mode creates its files here: a full disk or a read-only directory first shows now.
    db.close();
    throw asStoreError(error);
  }
  return db;
}

/** A prepared statement, and what is known of it once prepared. */
interface Prepared {
  statement: Statement;
  /** Whether its SQL can change rows. */
  writes: boolean;
  /**
   * The names of the columns it returns, or null if it returns none. Such a statement is read raw (each row
   * an array) and its rows named here: libsql builds an object row with a native call per column that
   * creates and hashes the column's name anew each time, twice the cost of the whole read for a key's
   * 13 columns (docs/performance.md, tenth session).
   */
  names: readonly string[] | null;
}

/** Work left for the end of a transaction (SqliteConnection.atCommit). */
export interface AtCommit {
  /**
   * Runs after every other work of the transaction: a read of what the transaction's writes leave (the
   * balance a settle reports, grants.ts) must see the rows the others write at the end.
   */
  readonly afterWrites?: boolean;
  run(conn: SqliteConnection): void;
}

/** A raw row as an object keyed by its statement's column names. */
function named<Row>(names: readonly string[], values: readonly unknown[]): Row {
  const row: Record<string, unknown> = {};
  for (let i = 0; i < names.length; i++) row[names[i] as string] = values[i];
  return row as Row;
}

/** SQL that only reads: a SELECT (or a WITH ending in one) naming no data-changing verb. */
const READ_ONLY_SQL = /^\s*(SELECT|WITH)\b/i;
const WRITE_VERB = /\b(INSERT|UPDATE|DELETE|REPLACE)\b/i;

/**
 * A connection with a statement cache keyed by SQL text: each statement is prepared once, on first use
 * (after migrate() has created the tables), and reused on the hot path. It counts the rows its statements
 * change, which group commit needs to tell a write that refused from one that threw half-way.
 */
export class SqliteConnection {
  private readonly statements = new Map<string, Prepared>();
  private readonly group: GroupCommit;
  /**
   * Rows changed through this connection: `changes` of each run, and 1 for each get/all of a statement that
   * may write (an UPDATE ... RETURNING), which over-counts rather than misses a write.
   */
  private changed = 0;
  /** Work the transaction's writes left for its end, by key (atCommit). */
  private pending = new Map<string, AtCommit>();
  /** What the transaction's writes asked to hear once it commits (afterCommit). */
  private committedCallbacks: (() => void)[] = [];

  constructor(readonly db: Db) {
    this.group = new GroupCommit(db, {
      changes: () => this.changed,
      beforeCommit: () => this.runPending(),
      committed: () => this.runCommitted(),
      rolledBack: () => this.dropPending(),
    });
  }

  /**
   * Runs `callback` once the open transaction has committed, never if it rolls back: for what the process
   * may only believe of a write once it is in the database (the facts of a hold it reserved,
   * reserved-holds.ts). Only inside a write's transaction: a group of reads alone has none to wait for.
   * It counts as a change, as atCommit does: a write that throws after asking is rolled back with its
   * group, and its callback with it, rather than heard of by a COMMIT of the others.
   */
  afterCommit(callback: () => void): void {
    if (!this.db.inTransaction) throw new Error('afterCommit outside a write transaction');
    this.changed += 1;
    this.committedCallbacks.push(callback);
  }

  /**
   * After the COMMIT: a callback that throws (a bug) neither stops the others nor turns the committed
   * writes into failures for their callers; it is reported as a process warning.
   */
  private runCommitted(): void {
    if (this.committedCallbacks.length === 0) return;
    const callbacks = this.committedCallbacks;
    this.committedCallbacks = [];
    for (const callback of callbacks) {
      try {
        callback();
      } catch (error) {
        process.emitWarning(`a callback after a ledger COMMIT threw: ${String(error)}`, 'SvcLedgerWarning');
      }
    }
  }

  private dropPending(): void {
    this.pending.clear();
    this.committedCallbacks = [];
  }

  /**
   * The work a write leaves for the end of its transaction under `key`, made by `create` the first time in
   * that transaction: the writes of a group that add to the same counter row (the usage rollup) add to one
   * object, written once before the COMMIT instead of once per write. It counts as a change: a write that
   * throws after asking for it is rolled back with its group (group-commit.ts), and the work with it.
   */
  atCommit<T extends AtCommit>(key: string, create: () => T): T {
    this.changed += 1;
    let work = this.pending.get(key);
    if (work === undefined) {
      work = create();
      this.pending.set(key, work);
    }
    return work as T;
  }

  /**
   * Runs the work left under `key` now, and forgets it: for a write that must read the rows that work
   * writes (the reap's expiry reads what the grants hold, expire.ts).
   */
  runPendingAt(key: string): void {
    const work = this.pending.get(key);
    if (work === undefined) return;
    // Counted as a change before it runs: work that throws here (a CHECK refusing a grant's sum) was left
    // by other writes of the transaction, which must roll back with it rather than commit without it.
    this.changed += 1;
    work.run(this);
    this.pending.delete(key);
  }

  /** The work left under `key` in the open transaction, if any (a read: it counts as no change). */
  pendingAt<T extends AtCommit>(key: string): T | undefined {
    return this.pending.get(key) as T | undefined;
  }

  private runPending(): void {
    if (this.pending.size === 0) return;
    const pending = this.pending;
    this.pending = new Map();
    let reads: AtCommit[] | null = null;
    for (const work of pending.values()) {
      if (work.afterWrites === true) (reads ??= []).push(work);
      else work.run(this);
    }
    if (reads !== null) for (const work of reads) work.run(this);
  }

  // Each statement maps the driver's error (errors.ts) where it is thrown: a read outside any transaction
  // (a balance, a key, an account) on a failing disk or a file another process locked is a 503 to retry,
  // not the 500 it was; inside a transaction or a group the mapping is the same and done once more there.

  /** Rows are typed by the caller's SQL; this is the one place that trusts the driver's untyped rows. */
  get<Row>(sql: string, ...params: SqlParam[]): Row | undefined {
    try {
      const { statement, writes, names } = this.statement(sql);
      if (writes) this.changed += 1;
      if (names === null) return statement.get(...params) as Row | undefined;
      const values = statement.get(...params) as unknown[] | undefined;
      return values === undefined ? undefined : named<Row>(names, values);
    } catch (error) {
      throw asStoreError(error);
    }
  }

  all<Row>(sql: string, ...params: SqlParam[]): Row[] {
    try {
      const { statement, writes, names } = this.statement(sql);
      if (writes) this.changed += 1;
      if (names === null) return statement.all(...params) as Row[];
      return (statement.all(...params) as unknown[][]).map((values) => named<Row>(names, values));
    } catch (error) {
      throw asStoreError(error);
    }
  }

  run(sql: string, ...params: SqlParam[]): number {
    try {
      const changes = this.statement(sql).statement.run(...params).changes;
      this.changed += changes;
      return changes;
    } catch (error) {
      throw asStoreError(error);
    }
  }

  /** Inserts and returns the new rowid (for AUTOINCREMENT tables). */
  insert(sql: string, ...params: SqlParam[]): number {
    try {
      const info = this.statement(sql).statement.run(...params);
      this.changed += info.changes;
      return Number(info.lastInsertRowid);
    } catch (error) {
      throw asStoreError(error);
    }
  }

  /**
   * The write path of the server: fn runs at once, inside the transaction this event-loop turn's writes
   * share, and the promise resolves once that transaction committed (group-commit.ts). Same guarantees as
   * immediate(): the write lock is held, so fn's checks and writes are one step.
   */
  write<T>(fn: () => T): Promise<T> {
    return this.group.run(fn);
  }

  /**
   * A read of the hot path, run with the turn's group of writes rather than on its own: at the group's
   * commit, in its transaction, so it costs what a statement costs among its peers (group-commit.ts), and
   * it sees what a read on its own would see once the promise resolves, since it resolves after that COMMIT.
   */
  batched<T>(fn: () => T): Promise<T> {
    return this.group.read(fn);
  }

  /**
   * Runs fn in BEGIN IMMEDIATE, committing any open write group first: the write lock is taken up front,
   * so two writers never both read a balance and then both spend it; a busy database waits up to
   * BUSY_TIMEOUT_MS instead of failing half-way through. Not re-entrant: callers never nest.
   */
  immediate<T>(fn: () => T): T {
    return this.transaction('BEGIN IMMEDIATE', fn);
  }

  /** A read transaction: every statement in fn sees one snapshot (WAL readers never block the writer). */
  read<T>(fn: () => T): T {
    return this.transaction('BEGIN DEFERRED', fn);
  }

  private transaction<T>(begin: string, fn: () => T): T {
    this.group.flush();
    try {
      this.db.exec(begin);
    } catch (error) {
      throw asStoreError(error);
    }
    try {
      const result = fn();
      this.runPending();
      this.db.exec('COMMIT');
      this.runCommitted();
      return result;
    } catch (error) {
      // SQLite may already have rolled back on some errors (e.g. SQLITE_FULL); a second ROLLBACK would
      // throw and hide the original error, and so would a ROLLBACK the same failing disk refuses.
      try {
        if (this.db.inTransaction) this.db.exec('ROLLBACK');
      } catch {
        // The original error below is the one to report.
      }
      this.dropPending();
      throw asStoreError(error);
    }
  }

  close(): void {
    this.group.flush();
    this.statements.clear();
    this.db.close();
  }

  private statement(sql: string): Prepared {
    let prepared = this.statements.get(sql);
    if (prepared === undefined) {
      const statement = this.db.prepare<SqlParam[]>(sql);
      const names = statement.reader ? statement.raw(true).columns().map((column) => column.name) : null;
      prepared = { statement, writes: !READ_ONLY_SQL.test(sql) || WRITE_VERB.test(sql), names };
      this.statements.set(sql, prepared);
    }
    return prepared;
  }
}
