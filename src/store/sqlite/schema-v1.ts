/**
 * Version 1 of the schema. Times are INTEGER epoch ms, days TEXT `YYYY-MM-DD` (UTC). CHECK constraints
 * repeat the invariants the code already enforces, so a bug (or a hand-written UPDATE) fails loudly
 * instead of leaving a negative balance behind.
 */
export const schemaV1 = `
CREATE TABLE accounts (
  id          TEXT PRIMARY KEY,
  name        TEXT,
  created_at  INTEGER NOT NULL
);

CREATE TABLE api_keys (
  id                  TEXT PRIMARY KEY,
  account_id          TEXT NOT NULL REFERENCES accounts(id),
  environment         TEXT NOT NULL CHECK (environment IN ('live', 'test')),
  name                TEXT,
  salt                TEXT NOT NULL,
  secret_hash         TEXT NOT NULL,
  redacted            TEXT NOT NULL,
  daily_credit_limit  INTEGER CHECK (daily_credit_limit IS NULL OR daily_credit_limit >= 0),
  created_at          INTEGER NOT NULL,
  revoked_at          INTEGER
);
CREATE INDEX api_keys_by_account ON api_keys (account_id, created_at);

-- One row per grant; remaining = credits neither spent nor held. Earned grants expire, purchased never.
CREATE TABLE credit_grants (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  account_id       TEXT NOT NULL REFERENCES accounts(id),
  environment      TEXT NOT NULL CHECK (environment IN ('live', 'test')),
  kind             TEXT NOT NULL CHECK (kind IN ('earned', 'purchased')),
  amount           INTEGER NOT NULL CHECK (amount > 0),
  remaining        INTEGER NOT NULL CHECK (remaining >= 0 AND remaining <= amount),
  expires_at       INTEGER,
  idempotency_key  TEXT,
  created_at       INTEGER NOT NULL,
  CHECK ((kind = 'earned') = (expires_at IS NOT NULL)),
  UNIQUE (account_id, idempotency_key)
);
CREATE INDEX credit_grants_by_owner ON credit_grants (account_id, environment, kind, expires_at);

CREATE TABLE holds (
  id                TEXT PRIMARY KEY,
  account_id        TEXT NOT NULL REFERENCES accounts(id),
  environment       TEXT NOT NULL CHECK (environment IN ('live', 'test')),
  key_id            TEXT NOT NULL REFERENCES api_keys(id),
  day               TEXT NOT NULL,
  amount            INTEGER NOT NULL CHECK (amount > 0),
  status            TEXT NOT NULL CHECK (status IN ('pending', 'settled', 'voided')),
  settled_amount    INTEGER CHECK (settled_amount IS NULL OR (settled_amount >= 0 AND settled_amount <= amount)),
  lease_expires_at  INTEGER NOT NULL,
  created_at        INTEGER NOT NULL,
  finalized_at      INTEGER,
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
  grant_id  INTEGER NOT NULL REFERENCES credit_grants(id),
  amount    INTEGER NOT NULL CHECK (amount > 0),
  PRIMARY KEY (hold_id, seq)
) WITHOUT ROWID;

-- Held + settled credits per key and UTC day of the reserve: the daily cap reads one row.
CREATE TABLE key_daily_usage (
  key_id     TEXT NOT NULL REFERENCES api_keys(id),
  day        TEXT NOT NULL,
  committed  INTEGER NOT NULL CHECK (committed >= 0),
  PRIMARY KEY (key_id, day)
) WITHOUT ROWID;

-- Append-only journal: every change of a grant's remaining is one row, so balances can be recomputed.
CREATE TABLE ledger_entries (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  account_id   TEXT NOT NULL REFERENCES accounts(id),
  environment  TEXT NOT NULL CHECK (environment IN ('live', 'test')),
  kind         TEXT NOT NULL CHECK (kind IN ('grant', 'reserve', 'settle', 'release', 'void')),
  amount       INTEGER NOT NULL CHECK (amount > 0),
  grant_id     INTEGER NOT NULL REFERENCES credit_grants(id),
  hold_id      TEXT REFERENCES holds(id),
  created_at   INTEGER NOT NULL,
  CHECK ((kind = 'grant') = (hold_id IS NULL))
);
CREATE INDEX ledger_entries_by_grant ON ledger_entries (grant_id);
CREATE INDEX ledger_entries_by_hold ON ledger_entries (hold_id) WHERE hold_id IS NOT NULL;
CREATE TRIGGER ledger_entries_no_update BEFORE UPDATE ON ledger_entries
BEGIN SELECT RAISE(ABORT, 'ledger_entries is append-only'); END;
CREATE TRIGGER ledger_entries_no_delete BEFORE DELETE ON ledger_entries
BEGIN SELECT RAISE(ABORT, 'ledger_entries is append-only'); END;

CREATE TABLE usage_events (
  id                 INTEGER PRIMARY KEY AUTOINCREMENT,
  account_id         TEXT NOT NULL REFERENCES accounts(id),
  environment        TEXT NOT NULL CHECK (environment IN ('live', 'test')),
  key_id             TEXT NOT NULL REFERENCES api_keys(id),
  hold_id            TEXT NOT NULL UNIQUE REFERENCES holds(id),
  request_id         TEXT NOT NULL,
  model              TEXT NOT NULL,
  routed_model       TEXT NOT NULL,
  routed_provider    TEXT NOT NULL,
  prompt_tokens      INTEGER NOT NULL CHECK (prompt_tokens >= 0),
  completion_tokens  INTEGER NOT NULL CHECK (completion_tokens >= 0),
  credits            INTEGER NOT NULL CHECK (credits >= 0),
  outcome            TEXT NOT NULL,
  latency_ms         INTEGER NOT NULL CHECK (latency_ms >= 0),
  day                TEXT NOT NULL,
  created_at         INTEGER NOT NULL
);
CREATE INDEX usage_events_by_owner_day ON usage_events (account_id, environment, day);

-- Maintained in the settle transaction, so the usage endpoint never scans events.
CREATE TABLE usage_daily (
  account_id         TEXT NOT NULL REFERENCES accounts(id),
  environment        TEXT NOT NULL CHECK (environment IN ('live', 'test')),
  day                TEXT NOT NULL,
  model              TEXT NOT NULL,
  requests           INTEGER NOT NULL CHECK (requests >= 0),
  prompt_tokens      INTEGER NOT NULL CHECK (prompt_tokens >= 0),
  completion_tokens  INTEGER NOT NULL CHECK (completion_tokens >= 0),
  credits            INTEGER NOT NULL CHECK (credits >= 0),
  PRIMARY KEY (account_id, environment, day, model)
) WITHOUT ROWID;
`;
