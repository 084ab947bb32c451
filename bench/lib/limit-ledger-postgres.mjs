// The ledger of the limit gateway on PostgreSQL (bench/servers/limit-gateway-postgres.mjs): the least durable
// metering a gateway does per request, each write one statement in its own transaction. Shared with
// bench/store-ops.mjs, which measures it beside the product's store (`--limit`).
//
// openLimitLedger(url, schema, { pool }) creates the schema and its tables when missing and seeds one account
// (10^15 credits) and one key when it has none; `seededKey` is that key's bearer secret (null when it was
// seeded before). The caller drops the schema.
import { createHmac, randomBytes } from 'node:crypto';
import postgres from 'postgres';

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;
const B62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const b62 = (n) => Array.from(randomBytes(n), (b) => B62[b % 62]).join('');

export async function openLimitLedger(url, schema, { pool = 10 } = {}) {
  if (!SCHEMA_NAME.test(schema)) throw new Error(`schema must match ${SCHEMA_NAME}, got ${schema}`);
  // The product's driver, with the product's default pool size; every connection is named after the schema,
  // so the bench finds the server backends serving it (and pins them as it pins the product's).
  const sql = postgres(url, { max: pool, onnotice: () => {}, connection: { search_path: schema, application_name: schema } });
  await sql.unsafe(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
  await sql.unsafe(`
CREATE TABLE IF NOT EXISTS accounts (id TEXT PRIMARY KEY, balance BIGINT NOT NULL, reserved BIGINT NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS api_keys (
  id TEXT PRIMARY KEY, account_id TEXT NOT NULL, salt BYTEA NOT NULL, hash BYTEA NOT NULL, revoked BOOLEAN NOT NULL DEFAULT false);
CREATE TABLE IF NOT EXISTS holds (
  id BIGSERIAL PRIMARY KEY, account_id TEXT NOT NULL, key_id TEXT NOT NULL, amount BIGINT NOT NULL,
  state SMALLINT NOT NULL DEFAULT 0, charged BIGINT, created_ms BIGINT NOT NULL, settled_ms BIGINT);
CREATE TABLE IF NOT EXISTS usage_events (
  id BIGSERIAL PRIMARY KEY, hold_id BIGINT NOT NULL, account_id TEXT NOT NULL, key_id TEXT NOT NULL,
  model TEXT NOT NULL, routed_model TEXT NOT NULL, prompt_tokens INTEGER NOT NULL,
  completion_tokens INTEGER NOT NULL, credits BIGINT NOT NULL, created_ms BIGINT NOT NULL);
`);
  let seededKey = null;
  const [{ n }] = await sql`SELECT count(*)::int AS n FROM api_keys`;
  if (n === 0) {
    const accountId = 'acct_' + b62(12);
    const id = b62(12);
    const secret = b62(32);
    const salt = randomBytes(16);
    const hash = createHmac('sha256', salt).update(secret).digest();
    await sql`INSERT INTO accounts (id, balance) VALUES (${accountId}, ${1e15})`;
    await sql`INSERT INTO api_keys (id, account_id, salt, hash) VALUES (${id}, ${accountId}, ${salt}, ${hash})`;
    seededKey = `svc_live_${id}${secret}`;
  }
  return {
    seededKey,
    findKey: (keyId) => sql`SELECT account_id, salt, hash, revoked FROM api_keys WHERE id = ${keyId}`.then((r) => r[0]),
    /** The hold's id, or null when the balance does not cover the amount (nothing is then written). */
    reserve: (accountId, keyId, amount) =>
      sql`
        WITH a AS (UPDATE accounts SET reserved = reserved + ${amount} WHERE id = ${accountId} AND balance - reserved >= ${amount} RETURNING id)
        INSERT INTO holds (account_id, key_id, amount, created_ms) SELECT id, ${keyId}, ${amount}, ${Date.now()} FROM a RETURNING id`
        .then((r) => (r.length === 1 ? r[0].id : null)),
    /** The balance left after the charge, or null if the hold was already final. */
    settle(hold, charged, usage) {
      const now = Date.now();
      return sql`
        WITH h AS (UPDATE holds SET state = 1, charged = ${charged}, settled_ms = ${now} WHERE id = ${hold.id} AND state = 0
                   RETURNING id, account_id, key_id, amount),
             a AS (UPDATE accounts SET balance = balance - ${charged}, reserved = reserved - h.amount FROM h
                   WHERE accounts.id = h.account_id RETURNING balance - reserved AS available),
             u AS (INSERT INTO usage_events (hold_id, account_id, key_id, model, routed_model, prompt_tokens, completion_tokens, credits, created_ms)
                   SELECT h.id, h.account_id, h.key_id, ${usage.model}, ${usage.routed}, ${usage.prompt}, ${usage.completion}, ${charged}, ${now} FROM h)
        SELECT available FROM a`.then((r) => (r.length === 1 ? Number(r[0].available) : null));
    },
    void: (hold) =>
      sql`
        WITH h AS (UPDATE holds SET state = 2, charged = 0, settled_ms = ${Date.now()} WHERE id = ${hold.id} AND state = 0 RETURNING account_id, amount)
        UPDATE accounts SET reserved = reserved - h.amount FROM h WHERE accounts.id = h.account_id`,
    end: () => sql.end({ timeout: 1 }),
  };
}
