/**
 * `ledger verify`: recomputes every balance from the append-only journal and compares it with the
 * materialized state. The checks are plain SQL valid on both SQLite and PostgreSQL, so both stores are
 * judged by one definition of consistent. Each query returns the offending rows only; an empty result
 * everywhere means the ledger is consistent.
 */

export interface AuditCheck {
  name: string;
  /** What must hold, in words, for the report. */
  rule: string;
  /** Selects one row `(subject, detail)` per violation. */
  sql: string;
}

const sum = (kind: string) => `COALESCE(SUM(CASE WHEN e.kind = '${kind}' THEN e.amount ELSE 0 END), 0)`;

/** A grant's remaining as its journal entries tell it (docs/ledger.md, "The journal"). */
const journalRemaining = `${sum('grant')} - ${sum('reserve')} + ${sum('release')} + ${sum('void')} - ${sum('expire')}`;

export const AUDIT_CHECKS: readonly AuditCheck[] = [
  {
    name: 'grant_remaining',
    rule: 'each grant: remaining = granted - reserved + released + voided - expired, and granted = amount',
    sql: `SELECT CAST(g.id AS TEXT) AS subject,
                 'remaining ' || CAST(g.remaining AS TEXT) || ' vs journal ' || CAST(${journalRemaining} AS TEXT) AS detail
          FROM credit_grants g LEFT JOIN ledger_entries e ON e.grant_id = g.id
          GROUP BY g.id, g.remaining, g.amount
          HAVING g.remaining <> ${journalRemaining}
              OR g.amount <> ${sum('grant')}`,
  },
  {
    name: 'hold_balance',
    rule: 'each hold: reserved = amount; a final hold has reserved = settled + released + voided; a pending one has no endings',
    sql: `SELECT h.id AS subject,
                 h.status || ' hold of ' || CAST(h.amount AS TEXT) || ': reserved ' || CAST(${sum('reserve')} AS TEXT) ||
                 ', settled ' || CAST(${sum('settle')} AS TEXT) || ', released ' || CAST(${sum('release')} + ${sum('void')} AS TEXT) AS detail
          FROM holds h LEFT JOIN ledger_entries e ON e.hold_id = h.id
          GROUP BY h.id, h.status, h.amount, h.settled_amount
          HAVING ${sum('reserve')} <> h.amount
              OR (h.status = 'pending' AND ${sum('settle')} + ${sum('release')} + ${sum('void')} <> 0)
              OR (h.status <> 'pending' AND ${sum('settle')} + ${sum('release')} + ${sum('void')} <> h.amount)
              OR ${sum('settle')} <> COALESCE(h.settled_amount, 0)`,
  },
  {
    name: 'usage_matches_settlements',
    rule: 'each settled hold has exactly one usage event carrying its settled amount; no usage without a settled hold',
    sql: `SELECT h.id AS subject,
                 'settled ' || CAST(COALESCE(h.settled_amount, 0) AS TEXT) || ' vs usage ' || COALESCE(CAST(u.credits AS TEXT), 'none') AS detail
          FROM holds h LEFT JOIN usage_events u ON u.hold_id = h.id
          WHERE (h.status = 'settled' AND (u.id IS NULL OR u.credits <> h.settled_amount))
             OR (h.status <> 'settled' AND u.id IS NOT NULL)`,
  },
  {
    name: 'usage_rollup',
    rule: 'the daily usage rollup equals the sum of usage events per account, environment, day and model',
    sql: `SELECT d.account_id || '/' || d.environment || '/' || d.day || '/' || d.model AS subject,
                 'rollup ' || CAST(d.requests AS TEXT) || ' requests, ' || CAST(d.credits AS TEXT) || ' credits vs events ' ||
                 CAST(COALESCE(x.requests, 0) AS TEXT) || ', ' || CAST(COALESCE(x.credits, 0) AS TEXT) AS detail
          FROM usage_daily d
          LEFT JOIN (SELECT account_id, environment, day, model, COUNT(*) AS requests, SUM(credits) AS credits,
                            SUM(prompt_tokens) AS prompt_tokens, SUM(completion_tokens) AS completion_tokens
                     FROM usage_events GROUP BY account_id, environment, day, model) x
            ON x.account_id = d.account_id AND x.environment = d.environment AND x.day = d.day AND x.model = d.model
          WHERE COALESCE(x.requests, 0) <> d.requests OR COALESCE(x.credits, 0) <> d.credits
             OR COALESCE(x.prompt_tokens, 0) <> d.prompt_tokens OR COALESCE(x.completion_tokens, 0) <> d.completion_tokens
          UNION ALL
          SELECT e.account_id || '/' || e.environment || '/' || e.day || '/' || e.model AS subject, 'events without a rollup row' AS detail
          FROM usage_events e
          LEFT JOIN usage_daily d
            ON d.account_id = e.account_id AND d.environment = e.environment AND d.day = e.day AND d.model = e.model
          WHERE d.account_id IS NULL
          GROUP BY e.account_id, e.environment, e.day, e.model`,
  },
  {
    name: 'daily_cap_counter',
    rule:
      "each key's daily counter = pending holds' amounts + settled amounts of the holds reserved that day by the key " +
      'and, for a capped key, by its descendants (its family shares its budget)',
    // budget(key_id, budget_id): the counters a reserve of key_id adds to, its own and its capped ancestors'.
    sql: `WITH RECURSIVE chain(key_id, ancestor_id, depth) AS (
            SELECT id, id, 0 FROM api_keys
            UNION ALL
            SELECT c.key_id, a.parent_key_id, c.depth + 1 FROM chain c JOIN api_keys a ON a.id = c.ancestor_id
            WHERE a.parent_key_id IS NOT NULL),
          budget(key_id, budget_id) AS (
            SELECT c.key_id, c.ancestor_id FROM chain c JOIN api_keys b ON b.id = c.ancestor_id
            WHERE c.depth = 0 OR b.daily_credit_limit IS NOT NULL)
          SELECT k.key_id || '/' || k.day AS subject,
                 'counter ' || CAST(k.committed AS TEXT) || ' vs holds ' || CAST(COALESCE(x.committed, 0) AS TEXT) AS detail
          FROM key_daily_usage k
          LEFT JOIN (SELECT b.budget_id AS key_id, h.day,
                            SUM(CASE WHEN h.status = 'pending' THEN h.amount WHEN h.status = 'settled' THEN h.settled_amount ELSE 0 END) AS committed
                     FROM holds h JOIN budget b ON b.key_id = h.key_id GROUP BY b.budget_id, h.day) x
            ON x.key_id = k.key_id AND x.day = k.day
          WHERE COALESCE(x.committed, 0) <> k.committed`,
  },
];

export interface AuditFinding {
  check: string;
  rule: string;
  subject: string;
  detail: string;
}

export interface LedgerAudit {
  checks: number;
  findings: AuditFinding[];
}
