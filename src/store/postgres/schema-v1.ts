/**
 * Version 1 of the PostgreSQL schema: the same tables, columns and constraints as the SQLite one
 * (src/store/sqlite/schema-v1.ts), so both stores keep the same books. Times are BIGINT epoch ms, days TEXT
 * `YYYY-MM-DD` (UTC), credits BIGINT. CHECK constraints repeat the invariants the code enforces under row
 * locks, so a bug (or a hand-written UPDATE) fails loudly instead of leaving a negative balance behind.
 * Day and model columns use the "C" collation: byte order, as in SQLite, whatever the database's locale
 * (some locales ignore hyphens when sorting model names), and the same collation on both sides of the
 * audit's joins (src/store/ledger-audit.ts).
 * Tables are created unqualified: they land in the store's schema (the connection's search_path).
 */
export const schemaV1 = `
CREATE TABLE accounts (
  id          TEXT PRIMARY KEY,
  name        TEXT,
  created_at  BIGINT NOT NULL
);

-- seq breaks created_at ties in insertion order (SQLite uses its rowid for that).
CREATE TABLE api_keys (
  id                  TEXT PRIMARY KEY,
  seq                 BIGINT GENERATED ALWAYS AS IDENTITY,
  account_id          TEXT NOT NULL REFERENCES accounts(id),
  environment         TEXT NOT NULL CHECK (environment IN ('live', 'test')),
  name                TEXT,
  salt                TEXT NOT NULL,
  secret_hash         TEXT NOT NULL,
  redacted            TEXT NOT NULL,
  daily_credit_limit  BIGINT CHECK (daily_credit_limit IS NULL OR daily_credit_limit >= 0),
  created_at          BIGINT NOT NULL,
  revoked_at          BIGINT
);
CREATE INDEX api_keys_by_account ON api_keys (account_id, created_at, seq);

-- remaining = credits neither spent nor held. Earned grants expire, purchased never. remaining is updated
-- on every reserve and settle and is in no index: the free space left by the fillfactor lets those updates
-- stay HOT (no index writes).
CREATE TABLE credit_grants (
  id               BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id       TEXT NOT NULL REFERENCES accounts(id),
  environment      TEXT NOT NULL CHECK (environment IN ('live', 'test')),
  kind             TEXT NOT NULL CHECK (kind IN ('earned', 'purchased')),
  amount           BIGINT NOT NULL CHECK (amount > 0),
  remaining        BIGINT NOT NULL CHECK (remaining >= 0 AND remaining <= amount),
  expires_at       BIGINT,
  idempotency_key  TEXT,
  created_at       BIGINT NOT NULL,
  CHECK ((kind = 'earned') = (expires_at IS NOT NULL)),
  UNIQUE (account_id, idempotency_key)
) WITH (fillfactor = 85);
CREATE INDEX credit_grants_by_owner ON credit_grants (account_id, environment, kind, expires_at);

CREATE TABLE holds (
  id                TEXT PRIMARY KEY,
  account_id        TEXT NOT NULL REFERENCES accounts(id),
  environment       TEXT NOT NULL CHECK (environment IN ('live', 'test')),
  key_id            TEXT NOT NULL REFERENCES api_keys(id),
  day               TEXT COLLATE "C" NOT NULL,
  amount            BIGINT NOT NULL CHECK (amount > 0),
  status            TEXT NOT NULL CHECK (status IN ('pending', 'settled', 'voided')),
  settled_amount    BIGINT CHECK (settled_amount IS NULL OR (settled_amount >= 0 AND settled_amount <= amount)),
  lease_expires_at  BIGINT NOT NULL,
  created_at        BIGINT NOT NULL,
  finalized_at      BIGINT,
  CHECK ((status = 'settled') = (settled_amount IS NOT NULL)),
  CHECK ((status = 'pending') = (finalized_at IS NULL))
);
-- Partial indexes: only pending holds are read on the hot path (reaper, balance, counts).
CREATE INDEX holds_pending_by_lease ON holds (lease_expires_at, created_at, id) WHERE status = 'pending';
CREATE INDEX holds_pending_by_owner ON holds (account_id, environment) WHERE status = 'pending';

-- Which grants a hold drew from, in allocation order (seq): settle consumes in this order.
CREATE TABLE hold_allocations (
  hold_id   TEXT NOT NULL REFERENCES holds(id),
  seq       INTEGER NOT NULL CHECK (seq >= 0),
  grant_id  BIGINT NOT NULL REFERENCES credit_grants(id),
  amount    BIGINT NOT NULL CHECK (amount > 0),
  PRIMARY KEY (hold_id, seq)
);

-- Held + settled credits per key and UTC day of the reserve: the daily cap reads (and locks) one row.
CREATE TABLE key_daily_usage (
  key_id     TEXT NOT NULL REFERENCES api_keys(id),
  day        TEXT COLLATE "C" NOT NULL,
  committed  BIGINT NOT NULL CHECK (committed >= 0),
  PRIMARY KEY (key_id, day)
) WITH (fillfactor = 85);

-- Append-only journal: every change of a grant's remaining is one row, so balances can be recomputed.
CREATE TABLE ledger_entries (
  id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id   TEXT NOT NULL REFERENCES accounts(id),
  environment  TEXT NOT NULL CHECK (environment IN ('live', 'test')),
  kind         TEXT NOT NULL CHECK (kind IN ('grant', 'reserve', 'settle', 'release', 'void')),
  amount       BIGINT NOT NULL CHECK (amount > 0),
  grant_id     BIGINT NOT NULL REFERENCES credit_grants(id),
  hold_id      TEXT REFERENCES holds(id),
  created_at   BIGINT NOT NULL,
  CHECK ((kind = 'grant') = (hold_id IS NULL))
);
CREATE INDEX ledger_entries_by_grant ON ledger_entries (grant_id);
CREATE INDEX ledger_entries_by_hold ON ledger_entries (hold_id) WHERE hold_id IS NOT NULL;
CREATE FUNCTION ledger_entries_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'ledger_entries is append-only' USING ERRCODE = 'restrict_violation';
END;
$$;
CREATE TRIGGER ledger_entries_no_change BEFORE UPDATE OR DELETE ON ledger_entries
  FOR EACH ROW EXECUTE FUNCTION ledger_entries_append_only();
-- TRUNCATE fires no row triggers; without this one the journal could still be emptied in one statement.
CREATE TRIGGER ledger_entries_no_truncate BEFORE TRUNCATE ON ledger_entries
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_entries_append_only();

CREATE TABLE usage_events (
  id                 BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id         TEXT NOT NULL REFERENCES accounts(id),
  environment        TEXT NOT NULL CHECK (environment IN ('live', 'test')),
  key_id             TEXT NOT NULL REFERENCES api_keys(id),
  hold_id            TEXT NOT NULL UNIQUE REFERENCES holds(id),
  request_id         TEXT NOT NULL,
  model              TEXT COLLATE "C" NOT NULL,
  routed_model       TEXT NOT NULL,
  routed_provider    TEXT NOT NULL,
  prompt_tokens      BIGINT NOT NULL CHECK (prompt_tokens >= 0),
  completion_tokens  BIGINT NOT NULL CHECK (completion_tokens >= 0),
  credits            BIGINT NOT NULL CHECK (credits >= 0),
  outcome            TEXT NOT NULL,
  latency_ms         BIGINT NOT NULL CHECK (latency_ms >= 0),
  day                TEXT COLLATE "C" NOT NULL,
  created_at         BIGINT NOT NULL
);
CREATE INDEX usage_events_by_owner_day ON usage_events (account_id, environment, day);

-- Maintained in the settle transaction, so the usage endpoint never scans events.
CREATE TABLE usage_daily (
  account_id         TEXT NOT NULL REFERENCES accounts(id),
  environment        TEXT NOT NULL CHECK (environment IN ('live', 'test')),
  day                TEXT COLLATE "C" NOT NULL,
  model              TEXT COLLATE "C" NOT NULL,
  requests           BIGINT NOT NULL CHECK (requests >= 0),
  prompt_tokens      BIGINT NOT NULL CHECK (prompt_tokens >= 0),
  completion_tokens  BIGINT NOT NULL CHECK (completion_tokens >= 0),
  credits            BIGINT NOT NULL CHECK (credits >= 0),
  PRIMARY KEY (account_id, environment, day, model)
);
`;
