/**
 * Reserve and settle as server-side functions: one statement, so one round trip and an implicit transaction
 * whose row locks last for the statement and its COMMIT only. As client-driven transactions they took five
 * and four round trips, with the key, day and grant rows of a busy account locked across all of them
 * (docs/performance.md). The decisions are the ones `src/store/ledger-rules.ts` takes for SQLite (spending
 * order, allocation, the split of a charge), restated in SQL; the conformance suite runs the same cases on
 * both stores, which is what keeps the two in step. Lock order and refusals: docs/ledger.md.
 *
 * Not a versioned migration: migrate() installs them after the migrations, in the same advisory-locked
 * transaction, whenever the definitions below differ from the installed ones (their SHA-256, kept as the
 * comment of the last function). So editing a body needs no migration, and a start with nothing to change
 * writes nothing, which lets instances run as a role that does not own the functions. The version is in the
 * names: a change of arguments or meaning gets a new name (svc_reserve_v2), so instances still running the
 * previous release keep calling the functions they were written for during a rolling deploy. A replaced
 * version is no longer defined here but stays installed where it was (nothing drops it), so those instances
 * still find it; it can be dropped by hand once no instance of the older release runs (docs/ledger.md).
 */
import { createHash } from 'node:crypto';
import type { PgQueryable } from './database.js';

/** Raised by svc_reserve_v2 when a reserve passed the unlocked check but the locked grants fall short. */
export const RESERVE_RACE_SHORT = 'SV001';

const ledgerFunctionsSql = `
CREATE OR REPLACE FUNCTION svc_balance_v1(p_account_id text, p_environment text, p_now bigint)
RETURNS TABLE (o_earned bigint, o_next_expiry bigint, o_purchased bigint, o_reserved bigint)
LANGUAGE sql STABLE AS $fn$
  SELECT
    COALESCE(SUM(g.remaining) FILTER (WHERE g.kind = 'earned' AND g.expires_at > p_now), 0)::bigint,
    MIN(g.expires_at) FILTER (WHERE g.kind = 'earned' AND g.expires_at > p_now AND g.remaining > 0),
    COALESCE(SUM(g.remaining) FILTER (WHERE g.kind = 'purchased'), 0)::bigint,
    (SELECT COALESCE(SUM(h.amount), 0)::bigint FROM holds h
     WHERE h.account_id = p_account_id AND h.environment = p_environment AND h.status = 'pending')
  FROM credit_grants g WHERE g.account_id = p_account_id AND g.environment = p_environment
$fn$;

-- A key (depth 0) and its ancestors; o_budget marks the day counters a reserve of the key adds to: its own
-- and each capped ancestor's, which so counts its whole family's spend (docs/ledger.md, "Key families").
-- PL/pgSQL, whose body is checked when first run, so the functions still install on a schema migrated only
-- part of the way (before version 5 added parent_key_id), as the other functions do.
CREATE OR REPLACE FUNCTION svc_key_chain_v1(p_key_id text)
RETURNS TABLE (o_id text, o_limit bigint, o_revoked_at bigint, o_depth integer, o_budget boolean)
LANGUAGE plpgsql STABLE AS $fn$
BEGIN
  RETURN QUERY WITH RECURSIVE chain(id, parent_key_id, daily_credit_limit, revoked_at, depth) AS (
    SELECT k.id, k.parent_key_id, k.daily_credit_limit, k.revoked_at, 0 FROM api_keys k WHERE k.id = p_key_id
    UNION ALL
    SELECT k.id, k.parent_key_id, k.daily_credit_limit, k.revoked_at, c.depth + 1
    FROM api_keys k JOIN chain c ON k.id = c.parent_key_id)
  SELECT c.id, c.daily_credit_limit, c.revoked_at, c.depth, c.depth = 0 OR c.daily_credit_limit IS NOT NULL FROM chain c;
END
$fn$;

-- v2: o_status, the hold's state (an existing hold may be final already). Key families (schema v5): the cap
-- of each capped ancestor is checked against its family's counter and every budget counter is added to;
-- the arguments and results are those of v2, so instances of the previous release get the check too.
CREATE OR REPLACE FUNCTION svc_reserve_v2(
  p_hold_id text, p_key_id text, p_amount bigint, p_lease_ms bigint, p_day text, p_now bigint)
RETURNS TABLE (o_outcome text, o_amount bigint, o_lease_expires_at bigint, o_limit bigint, o_committed bigint, o_available bigint,
               o_status text)
LANGUAGE plpgsql AS $fn$
DECLARE
  v_hold record;
  v_key record;
  v_grant record;
  v_available bigint;
  v_committed bigint;
  v_missing bigint := p_amount;
  v_take bigint;
  v_grant_ids bigint[] := '{}';
  v_amounts bigint[] := '{}';
  v_budget_ids text[];
  v_budget_limits bigint[];
  v_chain_revoked boolean;
  v_parent_key_id text;
  v_i integer;
BEGIN
  -- Hold ids double as idempotency keys: a retried reserve gets the original hold, whatever its state,
  -- and that state, so the caller knows whether it can still be settled.
  SELECT h.amount, h.lease_expires_at, h.status INTO v_hold FROM holds h WHERE h.id = p_hold_id;
  IF FOUND THEN
    RETURN QUERY SELECT 'ok'::text, v_hold.amount, v_hold.lease_expires_at, NULL::bigint, NULL::bigint, NULL::bigint, v_hold.status;
    RETURN;
  END IF;

  -- A key's parent never changes, so this unlocked read stays true.
  SELECT k.parent_key_id INTO v_parent_key_id FROM api_keys k WHERE k.id = p_key_id;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'key_inactive'::text, NULL::bigint, NULL::bigint, NULL::bigint, NULL::bigint, NULL::bigint, NULL::text;
    RETURN;
  END IF;
  IF v_parent_key_id IS NULL THEN
    -- Most keys have no family: the key is its only budget key, locked and read in one statement (step 1
    -- below, without the walk of the chain). The locked read sees the latest committed row.
    SELECT k.account_id, k.environment, k.daily_credit_limit, k.revoked_at INTO v_key
    FROM api_keys k WHERE k.id = p_key_id FOR NO KEY UPDATE;
    v_budget_ids := ARRAY[p_key_id];
    v_budget_limits := ARRAY[v_key.daily_credit_limit];
    v_chain_revoked := false;
  ELSE
    -- The budget keys, root first, and whether any ancestor is revoked (revocation cascades; this also
    -- covers a family written before it did).
    SELECT array_agg(c.o_id ORDER BY c.o_depth DESC) FILTER (WHERE c.o_budget),
           array_agg(c.o_limit ORDER BY c.o_depth DESC) FILTER (WHERE c.o_budget),
           COALESCE(bool_or(c.o_revoked_at IS NOT NULL), false)
    INTO v_budget_ids, v_budget_limits, v_chain_revoked
    FROM svc_key_chain_v1(p_key_id) c;

    -- Step 1 of the lock order: the budget keys' rows, ancestors before the key itself (the order revocations
    -- lock a family in), so every reserve that adds to a capped counter holds that key's row and the cap
    -- checks below read counters no one else is adding to. Exclusive, not FOR SHARE, so a revocation queues
    -- with the reserves.
    PERFORM 1 FROM api_keys k JOIN unnest(v_budget_ids) WITH ORDINALITY AS b(id, ord) ON k.id = b.id
    ORDER BY b.ord FOR NO KEY UPDATE OF k;
    SELECT k.account_id, k.environment, k.daily_credit_limit, k.revoked_at INTO v_key
    FROM api_keys k WHERE k.id = p_key_id;
  END IF;
  -- FOUND is the key's last read (assignments leave it alone): a row gone since the unlocked read refuses too.
  IF NOT FOUND OR v_key.revoked_at IS NOT NULL OR v_chain_revoked THEN
    RETURN QUERY SELECT 'key_inactive'::text, NULL::bigint, NULL::bigint, NULL::bigint, NULL::bigint, NULL::bigint, NULL::text;
    RETURN;
  END IF;

  -- Refusals are decided before anything is written, from the latest committed rows (each statement of a
  -- READ COMMITTED function reads a new snapshot), with the cap checked first as the locked path does.
  -- The locked path below decides again: these reads only spare a refusal its writes and their undoing.
  SELECT COALESCE(SUM(g.remaining), 0) INTO v_available FROM credit_grants g
  WHERE g.account_id = v_key.account_id AND g.environment = v_key.environment AND g.remaining > 0
    AND (g.expires_at IS NULL OR g.expires_at > p_now);
  -- The caps, root first (the widest budget is named first), then the balance; a refusal writes nothing.
  -- The budget keys' rows are locked, so no other reserve adds to these counters meanwhile.
  FOR v_i IN 1 .. cardinality(v_budget_ids) LOOP
    CONTINUE WHEN v_budget_limits[v_i] IS NULL;
    SELECT u.committed INTO v_committed FROM key_daily_usage u WHERE u.key_id = v_budget_ids[v_i] AND u.day = p_day;
    v_committed := COALESCE(v_committed, 0);
    IF v_committed + p_amount > v_budget_limits[v_i] THEN
      RETURN QUERY SELECT 'daily_limit_exceeded'::text, NULL::bigint, NULL::bigint, v_budget_limits[v_i], v_committed, NULL::bigint, NULL::text;
      RETURN;
    END IF;
  END LOOP;
  IF v_available < p_amount THEN
    RETURN QUERY SELECT 'insufficient_credits'::text, NULL::bigint, NULL::bigint, NULL::bigint, NULL::bigint, v_available, NULL::text;
    RETURN;
  END IF;

  -- Step 2: the day's rows of the budget keys, added to and locked in key order (the order settles and
  -- releases lock them in).
  INSERT INTO key_daily_usage AS u (key_id, day, committed)
  SELECT b.id, p_day, p_amount FROM unnest(v_budget_ids) AS b(id) ORDER BY b.id
  ON CONFLICT (key_id, day) DO UPDATE SET committed = u.committed + excluded.committed;

  -- Step 3: every spendable grant locked in id order (the inner ORDER BY feeds the lock), then taken in
  -- spending order: earned soonest expiry first, then purchased oldest first (ledger-rules.ts).
  v_available := 0;
  FOR v_grant IN
    SELECT l.id, l.remaining FROM (
      SELECT g.id, g.kind, g.remaining, g.expires_at, g.created_at FROM credit_grants g
      WHERE g.account_id = v_key.account_id AND g.environment = v_key.environment AND g.remaining > 0
        AND (g.expires_at IS NULL OR g.expires_at > p_now)
      ORDER BY g.id
      FOR NO KEY UPDATE) l
    ORDER BY (l.kind <> 'earned'), COALESCE(l.expires_at, 0), l.created_at, l.id
  LOOP
    v_available := v_available + v_grant.remaining;
    v_take := LEAST(v_grant.remaining, v_missing);
    IF v_take > 0 THEN
      v_grant_ids := v_grant_ids || v_grant.id;
      v_amounts := v_amounts || v_take;
      v_missing := v_missing - v_take;
    END IF;
  END LOOP;
  IF v_missing > 0 THEN
    -- Spent by another reserve since the check above: the error rolls back the day's charge.
    RAISE EXCEPTION 'insufficient credits' USING ERRCODE = '${RESERVE_RACE_SHORT}', DETAIL = v_available::text;
  END IF;

  -- Writes, in lock order: the grants (locked above), then the new hold, its allocations and the journal.
  UPDATE credit_grants g SET remaining = g.remaining - d.amount
  FROM unnest(v_grant_ids, v_amounts) AS d(id, amount) WHERE g.id = d.id;
  INSERT INTO holds (id, account_id, environment, key_id, day, amount, status, lease_expires_at, created_at)
  VALUES (p_hold_id, v_key.account_id, v_key.environment, p_key_id, p_day, p_amount, 'pending', p_now + p_lease_ms, p_now);
  INSERT INTO hold_allocations (hold_id, seq, grant_id, amount)
  SELECT p_hold_id, a.ord - 1, a.grant_id, a.amount
  FROM unnest(v_grant_ids, v_amounts) WITH ORDINALITY AS a(grant_id, amount, ord);
  INSERT INTO ledger_entries (account_id, environment, kind, amount, grant_id, hold_id, created_at)
  SELECT v_key.account_id, v_key.environment, 'reserve', a.amount, a.grant_id, p_hold_id, p_now
  FROM unnest(v_grant_ids, v_amounts) WITH ORDINALITY AS a(grant_id, amount, ord)
  ORDER BY a.ord;
  RETURN QUERY SELECT 'ok'::text, p_amount, p_now + p_lease_ms, NULL::bigint, NULL::bigint, NULL::bigint, 'pending'::text;
END
$fn$;

-- v2: p_shortfall_credits (stored on the usage event); o_voided, and o_charged for a hold already final
-- (what it was settled for, 0 if voided), so a settle retried after a lost reply recovers the first outcome.
-- v3 (schema v6): p_cached_tokens and p_reasoning_tokens, stored on the usage event and its daily rollup.
CREATE OR REPLACE FUNCTION svc_settle_v3(
  p_hold_id text, p_amount bigint, p_request_id text, p_model text, p_routed_model text, p_routed_provider text,
  p_prompt_tokens bigint, p_completion_tokens bigint, p_outcome text, p_latency_ms bigint, p_shortfall_credits bigint,
  p_day text, p_now bigint, p_cached_tokens bigint, p_reasoning_tokens bigint)
RETURNS TABLE (o_status text, o_charged bigint, o_voided boolean, o_account_id text, o_environment text,
               o_earned bigint, o_next_expiry bigint, o_purchased bigint, o_reserved bigint)
LANGUAGE plpgsql AS $fn$
DECLARE
  v_hold record;
  v_alloc record;
  v_charged bigint;
  v_to_charge bigint;
  v_spent bigint;
  v_kinds text[] := '{}';
  v_entry_amounts bigint[] := '{}';
  v_entry_grants bigint[] := '{}';
  v_grant_ids bigint[] := '{}';
  v_deltas bigint[] := '{}';
  v_budget_ids text[];
BEGIN
  -- Step 1: a second settle or void of this hold, from any instance, waits here and then reads its status.
  -- With it, whether its key has a parent (which never changes): most keys have none, and their day counter
  -- is then the one row to give credits back to.
  SELECT h.account_id, h.environment, h.key_id, h.day, h.amount, h.status, h.settled_amount, k.parent_key_id INTO v_hold
  FROM holds h LEFT JOIN api_keys k ON k.id = h.key_id WHERE h.id = p_hold_id FOR NO KEY UPDATE OF h;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'unknown_hold'::text, NULL::bigint, NULL::boolean, NULL::text, NULL::text,
      NULL::bigint, NULL::bigint, NULL::bigint, NULL::bigint;
    RETURN;
  END IF;
  IF v_hold.status <> 'pending' THEN
    RETURN QUERY SELECT 'already_final'::text, COALESCE(v_hold.settled_amount, 0), v_hold.status = 'voided',
      v_hold.account_id, v_hold.environment, b.*
    FROM svc_balance_v1(v_hold.account_id, v_hold.environment, p_now) b;
    RETURN;
  END IF;

  -- At most what was held, never less than zero; consumed in allocation order, so what goes back is the
  -- latest-expiring part (splitCharge in ledger-rules.ts).
  v_charged := LEAST(GREATEST(p_amount, 0), v_hold.amount);
  v_to_charge := v_charged;
  FOR v_alloc IN SELECT a.grant_id, a.amount FROM hold_allocations a WHERE a.hold_id = p_hold_id ORDER BY a.seq LOOP
    v_spent := LEAST(v_alloc.amount, v_to_charge);
    v_to_charge := v_to_charge - v_spent;
    v_kinds := v_kinds || ARRAY['settle', 'release'];
    v_entry_amounts := v_entry_amounts || ARRAY[v_spent, v_alloc.amount - v_spent];
    v_entry_grants := v_entry_grants || ARRAY[v_alloc.grant_id, v_alloc.grant_id];
    IF v_alloc.amount > v_spent THEN
      v_grant_ids := v_grant_ids || v_alloc.grant_id;
      v_deltas := v_deltas || (v_alloc.amount - v_spent);
    END IF;
  END LOOP;

  -- Step 2: the reserve's day gets back what was not spent, on every counter the reserve added to (the key's
  -- and its capped ancestors'), locked in key order.
  -- A single row needs no separate lock: its UPDATE takes the one lock there is to order.
  IF v_hold.amount > v_charged AND v_hold.parent_key_id IS NULL THEN
    UPDATE key_daily_usage u SET committed = u.committed - (v_hold.amount - v_charged)
    WHERE u.key_id = v_hold.key_id AND u.day = v_hold.day;
  ELSIF v_hold.amount > v_charged THEN
    v_budget_ids := ARRAY(SELECT c.o_id FROM svc_key_chain_v1(v_hold.key_id) c WHERE c.o_budget);
    PERFORM 1 FROM key_daily_usage u
    WHERE u.day = v_hold.day AND u.key_id = ANY(v_budget_ids)
    ORDER BY u.key_id FOR NO KEY UPDATE;
    UPDATE key_daily_usage u SET committed = u.committed - (v_hold.amount - v_charged)
    WHERE u.day = v_hold.day AND u.key_id = ANY(v_budget_ids);
  END IF;
  -- Step 3: the grants given credits back, locked in id order before the update (whose plan picks its own).
  IF cardinality(v_grant_ids) > 1 THEN
    PERFORM 1 FROM credit_grants g WHERE g.id = ANY(v_grant_ids) ORDER BY g.id FOR NO KEY UPDATE;
  END IF;
  IF cardinality(v_grant_ids) > 0 THEN
    UPDATE credit_grants g SET remaining = g.remaining + d.delta
    FROM unnest(v_grant_ids, v_deltas) AS d(id, delta) WHERE g.id = d.id;
  END IF;
  -- By its id alone: step 1 locked the row and found it pending, and nothing else can end it meanwhile. A
  -- status guard here would match the predicate of the partial indexes on pending holds, and the planner,
  -- from the stale statistics of a table that grows faster than autovacuum analyzes it, then scanned
  -- holds_pending_by_lease (whose third column is the id) instead of the primary key: a walk over every
  -- entry not yet vacuumed, on every settle (docs/performance.md).
  UPDATE holds h SET status = 'settled', settled_amount = v_charged, finalized_at = p_now
  WHERE h.id = p_hold_id;
  -- Zero-credit movements are not journalled (the table's CHECK wants amount > 0).
  INSERT INTO ledger_entries (account_id, environment, kind, amount, grant_id, hold_id, created_at)
  SELECT v_hold.account_id, v_hold.environment, e.kind, e.amount, e.grant_id, p_hold_id, p_now
  FROM unnest(v_kinds, v_entry_amounts, v_entry_grants) WITH ORDINALITY AS e(kind, amount, grant_id, ord)
  WHERE e.amount > 0
  ORDER BY e.ord;

  -- Step 4: usage in the same transaction as the credits, so the two can never disagree.
  INSERT INTO usage_events (account_id, environment, key_id, hold_id, request_id, model, routed_model, routed_provider,
    prompt_tokens, completion_tokens, credits, outcome, latency_ms, shortfall_credits, day, created_at,
    cached_tokens, reasoning_tokens)
  VALUES (v_hold.account_id, v_hold.environment, v_hold.key_id, p_hold_id, p_request_id, p_model, p_routed_model,
    p_routed_provider, p_prompt_tokens, p_completion_tokens, v_charged, p_outcome, p_latency_ms, p_shortfall_credits, p_day, p_now,
    p_cached_tokens, p_reasoning_tokens);
  INSERT INTO usage_daily AS u (account_id, environment, day, model, requests, prompt_tokens, completion_tokens, credits,
    cached_tokens, reasoning_tokens)
  VALUES (v_hold.account_id, v_hold.environment, p_day, p_model, 1, p_prompt_tokens, p_completion_tokens, v_charged,
    p_cached_tokens, p_reasoning_tokens)
  ON CONFLICT (account_id, environment, day, model) DO UPDATE SET
    requests = u.requests + 1,
    prompt_tokens = u.prompt_tokens + excluded.prompt_tokens,
    completion_tokens = u.completion_tokens + excluded.completion_tokens,
    credits = u.credits + excluded.credits,
    cached_tokens = u.cached_tokens + excluded.cached_tokens,
    reasoning_tokens = u.reasoning_tokens + excluded.reasoning_tokens;

  RETURN QUERY SELECT 'settled'::text, v_charged, false, v_hold.account_id, v_hold.environment, b.*
  FROM svc_balance_v1(v_hold.account_id, v_hold.environment, p_now) b;
END
$fn$;
`;

const definitionsHash = createHash('sha256').update(ledgerFunctionsSql).digest('hex');
/** Created last by ledgerFunctionsSql: its comment records which definitions are installed. */
const MARKED_FUNCTION =
  'svc_settle_v3(text, bigint, text, text, text, text, bigint, bigint, text, bigint, bigint, text, bigint, bigint, bigint)';

/** Installs the functions unless these very definitions are installed already; true if it wrote them. */
export async function installLedgerFunctions(tx: PgQueryable): Promise<boolean> {
  const [row] = await tx<{ installed: string | null }[]>`
    SELECT obj_description(to_regprocedure(${MARKED_FUNCTION}), 'pg_proc') AS installed`;
  if (row?.installed === `sha256:${definitionsHash}`) return false;
  await tx.unsafe(ledgerFunctionsSql).simple();
  await tx.unsafe(`COMMENT ON FUNCTION ${MARKED_FUNCTION} IS 'sha256:${definitionsHash}'`);
  return true;
}
