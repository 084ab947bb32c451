import {
  USAGE_EVENT_COLUMNS,
  type UsageDailyRow,
  type UsageEventDbRow,
  checkUsageEventQuery,
  toUsageDay,
  toUsageEvent,
  usageEventCursor,
} from '../rows.js';
import type { UsageDayRow, UsageEventQuery, UsageEventRow, UsageQuery, UsageRecord, UsageStore } from '../types.js';
import { utcDay } from '../utc-day.js';
import type { AtCommit, SqlParam, SqliteConnection } from './database.js';
import type { HoldOwner } from './holds.js';
import { insertRows } from './multi-row-insert.js';

const EVENT_INSERT = {
  head: `INSERT INTO usage_events (account_id, environment, key_id, hold_id, request_id, model, routed_model, routed_provider,
       prompt_tokens, completion_tokens, credits, outcome, latency_ms, day, created_at, shortfall_credits,
       cached_tokens, reasoning_tokens) VALUES `,
  row: '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
};
const EVENT_COLUMNS = 18;

/**
 * The usage events of a transaction, written at its end together (multi-row-insert.ts), as the journal's rows
 * are (journal.ts): one INSERT a settle cost about 12 us of the store's 130 us a request. Nothing reads the
 * events inside a write.
 */
class UsageEventRows implements AtCommit {
  readonly params: SqlParam[] = [];

  run(conn: SqliteConnection): void {
    insertRows(conn, EVENT_INSERT, EVENT_COLUMNS, this.params);
  }
}

/**
 * Writes the usage event and adds to the daily rollup, inside the settle transaction (both are written at the
 * transaction's end, UsageEventRows and RollupDelta), so usage and credits can never disagree. The event's day
 * is the UTC day of the settle (when the request finished), which may differ from the hold's day (used by
 * the key's daily cap).
 */
export function recordUsage(conn: SqliteConnection, hold: HoldOwner, usage: UsageRecord, credits: number, now: number): void {
  const day = utcDay(now);
  conn.atCommit('usage_events', () => new UsageEventRows()).params.push(
    hold.accountId,
    hold.environment,
    hold.keyId,
    hold.id,
    usage.requestId,
    usage.model,
    usage.routedModel,
    usage.routedProvider,
    usage.promptTokens,
    usage.completionTokens,
    credits,
    usage.outcome,
    Math.round(usage.latencyMs),
    day,
    now,
    usage.shortfallCredits,
    usage.cachedTokens ?? 0,
    usage.reasoningTokens ?? 0,
  );
  const rollup = conn.atCommit(
    `usage_daily\u0000${hold.accountId}\u0000${hold.environment}\u0000${day}\u0000${usage.model}`,
    () => new RollupDelta(hold.accountId, hold.environment, day, usage.model),
  );
  rollup.requests += 1;
  rollup.promptTokens += usage.promptTokens;
  rollup.completionTokens += usage.completionTokens;
  rollup.credits += credits;
  rollup.cachedTokens += usage.cachedTokens ?? 0;
  rollup.reasoningTokens += usage.reasoningTokens ?? 0;
}

/**
 * What a transaction's settles add to one row of the daily rollup, written once at its end: under load a
 * group commit holds dozens of settles of the same account, day and model, which each paid an upsert of the
 * same row (about 6.5 us a request, docs/performance.md, tenth session). Same transaction as the events, so
 * the rollup still never disagrees with them once committed.
 */
class RollupDelta implements AtCommit {
  requests = 0;
  promptTokens = 0;
  completionTokens = 0;
  credits = 0;
  cachedTokens = 0;
  reasoningTokens = 0;

  constructor(
    private readonly accountId: string,
    private readonly environment: string,
    private readonly day: string,
    private readonly model: string,
  ) {}

  run(conn: SqliteConnection): void {
    conn.run(
      `INSERT INTO usage_daily (account_id, environment, day, model, requests, prompt_tokens, completion_tokens, credits,
         cached_tokens, reasoning_tokens)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (account_id, environment, day, model) DO UPDATE SET
         requests = requests + excluded.requests,
         prompt_tokens = prompt_tokens + excluded.prompt_tokens,
         completion_tokens = completion_tokens + excluded.completion_tokens,
         credits = credits + excluded.credits,
         cached_tokens = cached_tokens + excluded.cached_tokens,
         reasoning_tokens = reasoning_tokens + excluded.reasoning_tokens`,
      this.accountId,
      this.environment,
      this.day,
      this.model,
      this.requests,
      this.promptTokens,
      this.completionTokens,
      this.credits,
      this.cachedTokens,
      this.reasoningTokens,
    );
  }
}

export class SqliteUsageStore implements UsageStore {
  constructor(private readonly conn: SqliteConnection) {}

  async rollup(query: UsageQuery): Promise<UsageDayRow[]> {
    // Days are zero-padded ISO strings, so text comparison is chronological.
    return this.conn
      .all<UsageDailyRow>(
        `SELECT day, model, requests, prompt_tokens, completion_tokens, cached_tokens, reasoning_tokens, credits FROM usage_daily
         WHERE account_id = ?1 AND environment = ?2 AND day >= ?3 AND day <= ?4 AND (?5 IS NULL OR model = ?5)
         ORDER BY day, model`,
        query.accountId,
        query.environment,
        query.startDay,
        query.endDay,
        query.model,
      )
      .map(toUsageDay);
  }

  async events(query: UsageEventQuery): Promise<UsageEventRow[]> {
    checkUsageEventQuery(query);
    const cursor = usageEventCursor(query);
    // Pinned to the (created_at, id) index: without statistics SQLite would take the (account, environment,
    // day) index for an account's export and sort the account's whole period again for every page. The range
    // starts at the cursor's instant (a row value `(created_at, id) > (?, ?)` would start it at startMs, and
    // each page would walk every row before it again); of that instant, only the rows after the cursor's id.
    return this.conn
      .all<UsageEventDbRow>(
        `SELECT ${USAGE_EVENT_COLUMNS} FROM usage_events INDEXED BY usage_events_by_time
         WHERE created_at >= ?1 AND created_at < ?2 AND (created_at > ?3 OR id > ?4)
           AND (?5 IS NULL OR account_id = ?5) AND (?6 IS NULL OR environment = ?6)
         ORDER BY created_at, id LIMIT ?7`,
        Math.max(query.startMs, cursor.at),
        query.endMs,
        cursor.at,
        cursor.id,
        query.accountId,
        query.environment,
        query.limit,
      )
      .map(toUsageEvent);
  }
}
