import { StoreError } from '../errors.js';
import { type SpendableGrant, bySpendingOrder, validateGrant } from '../ledger-rules.js';
import { type GrantRow, toGrant } from '../rows.js';
import type { Balance, CreditKind, Environment, Grant, GrantInput } from '../types.js';
import type { AtCommit, SqliteConnection } from './database.js';
import { appendEntry } from './journal.js';

const GRANT_COLUMNS = 'id, account_id, environment, kind, amount, remaining, expires_at, created_at';

/** Must run inside an IMMEDIATE transaction: the idempotency check and the insert are one step. */
export function insertGrant(conn: SqliteConnection, input: GrantInput, now: number): { grant: Grant; created: boolean } {
  validateGrant(input);
  if (input.idempotencyKey !== null) {
    const existing = conn.get<GrantRow>(
      `SELECT ${GRANT_COLUMNS} FROM credit_grants WHERE account_id = ? AND idempotency_key = ?`,
      input.accountId,
      input.idempotencyKey,
    );
    // The grant as it is now (its remaining may have been spent since, in this transaction too): the first
    // grant wins, whatever this second request asked for.
    if (existing) {
      const grant = toGrant(existing);
      grant.remaining += conn.pendingAt<GrantDeltas>(GRANT_DELTAS)?.deltaOf(existing.id) ?? 0;
      return { grant, created: false };
    }
  }
  if (!conn.get<{ id: string }>('SELECT id FROM accounts WHERE id = ?', input.accountId)) {
    throw new StoreError('not_found', `account ${input.accountId} does not exist`);
  }
  const id = conn.insert(
    `INSERT INTO credit_grants (account_id, environment, kind, amount, remaining, expires_at, idempotency_key, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    input.accountId,
    input.environment,
    input.kind,
    input.amount,
    input.amount,
    input.expiresAt,
    input.idempotencyKey,
    now,
  );
  appendEntry(
    conn,
    { accountId: input.accountId, environment: input.environment, kind: 'grant', amount: input.amount, grantId: id, holdId: null },
    now,
  );
  const grant: Grant = {
    id: String(id),
    accountId: input.accountId,
    environment: input.environment,
    kind: input.kind,
    amount: input.amount,
    remaining: input.amount,
    expiresAt: input.expiresAt,
    createdAt: now,
  };
  return { grant, created: true };
}

/**
 * The grants a new hold may draw from, as one JSON array, for a reserve's read (reserve.ts) to select
 * beside the key: `k` is the key's row, `?3` the instant (a grant expires at expires_at exactly). One row,
 * not several: libsql reads several rows through an iterator (a native object and a 100-slot array a call),
 * about 3 us more than one row's read (docs/performance.md, thirteenth session), and an account has a grant
 * or a few. Credits are safe integers, which JSON numbers carry exactly.
 */
export const SPENDABLE_GRANTS_JSON = `(SELECT json_group_array(json_array(g.id, g.kind, g.remaining, g.expires_at, g.created_at))
   FROM credit_grants g
   WHERE g.account_id = k.account_id AND g.environment = k.environment AND g.remaining > 0
     AND (g.expires_at IS NULL OR g.expires_at > ?3))`;

/** Whose credits: the account and environment a grant, a hold or a balance belongs to. */
export interface Owner {
  accountId: string;
  environment: Environment;
}

/**
 * The spendable grants of SPENDABLE_GRANTS_JSON, in spending order (ledger-rules.ts), as the open
 * transaction sees them: with what its writes moved and has not yet written (GrantDeltas). A grant the
 * transaction has emptied is left out; one whose row says empty but to which the transaction gave credits
 * back is read and counted in.
 */
export function spendableFrom(conn: SqliteConnection, grantsJson: string, owner: Owner, now: number): SpendableGrant[] {
  const rows = JSON.parse(grantsJson) as [number, CreditKind, number, number | null, number][];
  const deltas = conn.pendingAt<GrantDeltas>(GRANT_DELTAS);
  const grants: SpendableGrant[] = [];
  for (const [grantId, kind, written, expiresAt, createdAt] of rows) {
    const remaining = written + (deltas?.deltaOf(grantId) ?? 0);
    if (remaining > 0) grants.push({ grantId, kind, remaining, expiresAt, createdAt });
  }
  if (deltas !== undefined) {
    for (const grantId of deltas.refilled(owner)) {
      if (rows.some((row) => row[0] === grantId)) continue;
      const row = conn.get<{ kind: CreditKind; remaining: number; expires_at: number | null; created_at: number }>(
        'SELECT kind, remaining, expires_at, created_at FROM credit_grants WHERE id = ? AND (expires_at IS NULL OR expires_at > ?)',
        grantId,
        now,
      );
      const remaining = row === undefined ? 0 : row.remaining + deltas.deltaOf(grantId);
      if (row !== undefined && remaining > 0) grants.push({ grantId, kind: row.kind, remaining, expiresAt: row.expires_at, createdAt: row.created_at });
    }
  }
  return grants.sort(bySpendingOrder);
}

interface GrantDelta {
  owner: Owner;
  delta: number;
}

const GRANT_DELTAS = 'credit_grants';

/**
 * What a transaction's writes move in and out of grants, one sum a grant, written in one UPDATE each at its
 * end (SqliteConnection.atCommit), as the day counters are (daily-usage.ts): under load a group commit holds
 * dozens of reserves and settles on an account's one grant, which each paid an UPDATE of the same row (two a
 * request whose charge is below its hold). Every read of `remaining` inside a write adds the sum
 * (spendableFrom, insertGrant's replay) or has the sums written first (writeGrantDeltas), so each reserve
 * allocates against what the writes before it left. The CHECK (remaining >= 0) still guards the row, at
 * the end.
 */
class GrantDeltas implements AtCommit {
  private readonly byGrant = new Map<number, GrantDelta>();

  add(owner: Owner, grantId: number, delta: number): void {
    const entry = this.byGrant.get(grantId);
    if (entry === undefined) this.byGrant.set(grantId, { owner, delta });
    else entry.delta += delta;
  }

  deltaOf(grantId: number): number {
    return this.byGrant.get(grantId)?.delta ?? 0;
  }

  /** The owner's grants this transaction has given more credits back to than it took. */
  *refilled(owner: Owner): Iterable<number> {
    for (const [grantId, entry] of this.byGrant) {
      if (entry.delta > 0 && entry.owner.accountId === owner.accountId && entry.owner.environment === owner.environment) yield grantId;
    }
  }

  run(conn: SqliteConnection): void {
    for (const [grantId, { delta }] of this.byGrant) {
      if (delta !== 0) conn.run('UPDATE credit_grants SET remaining = remaining + ? WHERE id = ?', delta, grantId);
    }
  }
}

/**
 * Writes what the open transaction has moved in and out of grants now, for a write that reads the grants'
 * rows themselves (the reap's expiry, expire.ts).
 */
export function writeGrantDeltas(conn: SqliteConnection): void {
  conn.runPendingAt(GRANT_DELTAS);
}

/**
 * Moves credits between a grant of `owner` and a hold (or writes them off), at the transaction's end
 * (GrantDeltas); the CHECK (remaining >= 0) is the backstop.
 */
export function adjustRemaining(conn: SqliteConnection, owner: Owner, grantId: number, delta: number): void {
  if (delta !== 0) conn.atCommit(GRANT_DELTAS, () => new GrantDeltas()).add(owner, grantId, delta);
}

const BALANCE_SQL = `SELECT
       COALESCE(SUM(CASE WHEN kind = 'earned' AND expires_at > ?1 THEN remaining END), 0) AS earned,
       MIN(CASE WHEN kind = 'earned' AND expires_at > ?1 AND remaining > 0 THEN expires_at END) AS next_expiry,
       COALESCE(SUM(CASE WHEN kind = 'purchased' THEN remaining END), 0) AS purchased,
       (SELECT COALESCE(SUM(amount), 0) FROM holds
        WHERE account_id = ?2 AND environment = ?3 AND status = 'pending') AS reserved
     FROM credit_grants WHERE account_id = ?2 AND environment = ?3`;

/** An owner's balance, read outside any write (grants and pending holds in one statement). */
export function balanceOf(conn: SqliteConnection, accountId: string, environment: Environment, now: number): Balance {
  const balance: Balance = { accountId, environment, earned: 0, earnedNextExpiry: null, purchased: 0, reserved: 0 };
  readBalance(conn, balance, now);
  return balance;
}

function readBalance(conn: SqliteConnection, into: Balance, now: number): void {
  const row = conn.get<{ earned: number; next_expiry: number | null; purchased: number; reserved: number }>(
    BALANCE_SQL,
    now,
    into.accountId,
    into.environment,
  );
  into.earned = row?.earned ?? 0;
  into.earnedNextExpiry = row?.next_expiry ?? null;
  into.purchased = row?.purchased ?? 0;
  into.reserved = row?.reserved ?? 0;
}

/**
 * The balances the open transaction's settles report, read once per owner after all of its writes: a
 * transaction's writes commit together, so the state after the last of them is the first one anybody else
 * can see, and the only one a settle can truthfully report (a balance between two writes of one group never
 * existed for any reader). Under load that is one read a group of dozens of settles on one account, where
 * each read its own (a sum over the account's pending holds, one per request in flight).
 */
class BalanceReads implements AtCommit {
  readonly afterWrites = true;
  private readonly balances: Balance[] = [];
  /** The latest instant of the settles asking: the expiry cut-off the committed state is read at. */
  private now = 0;

  add(balance: Balance, now: number): void {
    this.balances.push(balance);
    if (now > this.now) this.now = now;
  }

  run(conn: SqliteConnection): void {
    let read: Balance | undefined;
    for (const balance of this.balances) {
      if (read === undefined) {
        readBalance(conn, balance, this.now);
        read = balance;
      } else {
        balance.earned = read.earned;
        balance.earnedNextExpiry = read.earnedNextExpiry;
        balance.purchased = read.purchased;
        balance.reserved = read.reserved;
      }
    }
  }
}

/**
 * An owner's balance as the open transaction leaves it: the object is filled in at the transaction's end,
 * before its COMMIT, so a write's result carries it and its caller, who hears the result only once the
 * COMMIT is done, reads it whole.
 */
export function balanceAtCommit(conn: SqliteConnection, accountId: string, environment: Environment, now: number): Balance {
  const balance: Balance = { accountId, environment, earned: 0, earnedNextExpiry: null, purchased: 0, reserved: 0 };
  conn.atCommit(`balance\u0000${accountId}\u0000${environment}`, () => new BalanceReads()).add(balance, now);
  return balance;
}
