import Database from 'libsql';
import { GroupCommit } from './group-commit.js';

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
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  return db;
}

/**
 * A connection with a statement cache keyed by SQL text: each statement is prepared once, on first use
 * (after migrate() has created the tables), and reused on the hot path.
 */
export class SqliteConnection {
  private readonly statements = new Map<string, Statement>();
  private readonly group: GroupCommit;

  constructor(readonly db: Db) {
    this.group = new GroupCommit(db);
  }

  /** Rows are typed by the caller's SQL; this is the one place that trusts the driver's untyped rows. */
  get<Row>(sql: string, ...params: SqlParam[]): Row | undefined {
    return this.statement(sql).get(...params) as Row | undefined;
  }

  all<Row>(sql: string, ...params: SqlParam[]): Row[] {
    return this.statement(sql).all(...params) as Row[];
  }

  run(sql: string, ...params: SqlParam[]): number {
    return this.statement(sql).run(...params).changes;
  }

  /** Inserts and returns the new rowid (for AUTOINCREMENT tables). */
  insert(sql: string, ...params: SqlParam[]): number {
    return Number(this.statement(sql).run(...params).lastInsertRowid);
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
    this.db.exec(begin);
    try {
      const result = fn();
      this.db.exec('COMMIT');
      return result;
    } catch (error) {
      // SQLite may already have rolled back on some errors (e.g. SQLITE_FULL); a second ROLLBACK would
      // throw and hide the original error.
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      throw error;
    }
  }

  close(): void {
    this.group.flush();
    this.statements.clear();
    this.db.close();
  }

  private statement(sql: string): Statement {
    let statement = this.statements.get(sql);
    if (statement === undefined) {
      statement = this.db.prepare<SqlParam[]>(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }
}
