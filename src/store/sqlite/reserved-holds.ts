import type { SqliteConnection } from './database.js';
import type { HoldFacts } from './holds.js';

/**
 * Past this many, the facts are dropped all at once. Every hold this process reserves is ended here (a
 * settle, a void or the reaper's void), which takes its facts; what could still be left behind is a hold
 * another process ended, which this one then never settles. A dropped hold's settle only reads its facts
 * back.
 */
const MAX_REMEMBERED = 100_000;

/**
 * The facts of the holds this process reserved and has not ended (holds.ts, HoldFacts), so that their
 * settle need not read them back: every request's settle, when one process serves it from reserve to end.
 * Facts are remembered only once the reserve's transaction has committed (SqliteConnection.afterCommit):
 * a reserve rolled back leaves nothing, or a later hold of the same id (a retried Idempotency-Key, made by
 * another process) could be settled against allocations it never had. They never change in a hold's life,
 * so a remembered fact is never stale; a settle of a hold that is no longer pending falls back to reading
 * it (finalize.ts).
 */
export class ReservedHolds {
  private readonly facts = new Map<string, HoldFacts>();

  /** Called inside the reserve's transaction, for a hold it has just written. */
  remember(conn: SqliteConnection, facts: HoldFacts): void {
    conn.afterCommit(() => {
      if (this.facts.size >= MAX_REMEMBERED) this.facts.clear();
      this.facts.set(facts.hold.id, facts);
    });
  }

  /**
   * Called inside the transaction of a write that ends the hold (a settle, a void, the reap): its facts, if
   * remembered, forgotten whatever the ending's outcome, for it is their last use. Unknown, they may yet be
   * remembered by a reserve of the same transaction, whose facts are kept at its COMMIT: they are forgotten
   * then too, after it.
   */
  take(conn: SqliteConnection, holdId: string): HoldFacts | undefined {
    const facts = this.facts.get(holdId);
    if (facts !== undefined) {
      this.facts.delete(holdId);
      return facts;
    }
    conn.afterCommit(() => this.facts.delete(holdId));
    return undefined;
  }

  get size(): number {
    return this.facts.size;
  }
}
