import postgres from 'postgres';

/**
 * BIGINT (int8) columns hold epoch ms and credits. The driver returns them as strings by default (they may
 * exceed 2^53); every value this store writes is a safe integer and sums are cast back to BIGINT, so they
 * are parsed as numbers here, in one place.
 */
const bigintAsNumber = {
  to: 20,
  from: [20],
  serialize: (value: number) => String(value),
  parse: (raw: string) => Number(raw),
};

function openSql(url: string, options: { schema: string | null; max: number }) {
  return postgres(url, {
    max: options.max,
    types: { bigint: bigintAsNumber },
    // IF NOT EXISTS and friends send notices; the driver would print them to stdout.
    onnotice: () => undefined,
    // Seconds before reconnecting after failed attempts. The driver's default grows to 20 s, so after a
    // database restart a pool could sit idle for that long with requests queued on it; 0.1 s doubling up
    // to 1 s recovers within a second and still spaces out attempts against a server that is down.
    backoff: (retries: number) => Math.min(0.1 * 2 ** retries, 1),
    // Unqualified table names resolve in the store's schema, so one database can hold several gateways
    // (and the tests a schema per store).
    // Read committed for every statement, whatever the server's default: reserve and settle run as single
    // statements in their own transactions (ledger-functions.ts), and the ledger's argument rests on row
    // locks, not snapshots (docs/ledger.md); SERIALIZABLE would only add retryable failures.
    connection: {
      default_transaction_isolation: 'read committed',
      ...(options.schema === null ? {} : { search_path: options.schema }),
    },
  });
}

export type PgSql = ReturnType<typeof openSql>;
/**
 * What queries run on: the pool or a transaction. Helpers issue all their statements before their first
 * await, so a caller can pipeline several helpers with Promise.all (one round trip) and the statements still
 * run in call order on the transaction's connection, which is what keeps the lock order.
 */
export type PgQueryable = postgres.ISql<{ bigint: number }>;
export type PgTx = postgres.TransactionSql<{ bigint: number }>;

/** Schema names are spliced into the connection's search_path: keep them to plain identifiers. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export function openPool(url: string, options: { schema: string | null; max: number }): PgSql {
  if (options.schema !== null && !SCHEMA_NAME.test(options.schema)) {
    throw new Error(`PostgreSQL schema must match ${String(SCHEMA_NAME)}, got ${JSON.stringify(options.schema)}`);
  }
  if (!Number.isSafeInteger(options.max) || options.max < 1) {
    throw new Error(`PostgreSQL pool size must be an integer >= 1, got ${String(options.max)}`);
  }
  return openSql(url, options);
}

/** Thrown inside a transaction to roll it back while still answering with a business outcome. */
class Rollback extends Error {
  constructor(readonly outcome: unknown) {
    super('transaction rolled back on purpose');
  }
}

export type Abort = <T>(outcome: T) => never;

const abort: Abort = (outcome) => {
  throw new Rollback(outcome);
};

/**
 * Runs fn in one READ COMMITTED transaction. The isolation level is explicit because the ledger's
 * correctness argument (docs/ledger.md) rests on row locks taken in a fixed order, not on snapshots; a
 * server default of SERIALIZABLE would only add retryable failures. `abort(outcome)` rolls back and
 * returns the outcome, for refusals that must leave no trace.
 */
export async function transaction<T>(sql: PgSql, fn: (tx: PgTx, abort: Abort) => Promise<T>): Promise<T> {
  try {
    // The driver's result type unwraps arrays of promises; fn returns plain values, so it is T.
    return (await sql.begin('isolation level read committed', (tx) => fn(tx, abort))) as T;
  } catch (error) {
    if (error instanceof Rollback) return error.outcome as T;
    throw error;
  }
}
