import { type UsageDailyRow, toUsageDay } from '../rows.js';
import type { UsageDayRow, UsageQuery, UsageRecord, UsageStore } from '../types.js';
import { utcDay } from '../utc-day.js';
import type { PgQueryable, PgSql } from './database.js';
import { guard } from './errors.js';
import type { Hold } from './holds.js';

/**
 * Writes the usage event and bumps the daily rollup, inside the settle transaction, so usage and credits
 * can never disagree. The event's day is the UTC day of the settle (when the request finished), which may
 * differ from the hold's day (used by the key's daily cap). The rollup row is the last lock a settle takes.
 */
export async function recordUsage(tx: PgQueryable, hold: Hold, usage: UsageRecord, credits: number, now: number): Promise<void> {
  const day = utcDay(now);
  await Promise.all([
    tx`INSERT INTO usage_events (account_id, environment, key_id, hold_id, request_id, model, routed_model, routed_provider,
         prompt_tokens, completion_tokens, credits, outcome, latency_ms, day, created_at)
       VALUES (${hold.accountId}, ${hold.environment}, ${hold.keyId}, ${hold.id}, ${usage.requestId}, ${usage.model},
         ${usage.routedModel}, ${usage.routedProvider}, ${usage.promptTokens}, ${usage.completionTokens}, ${credits},
         ${usage.outcome}, ${Math.round(usage.latencyMs)}, ${day}, ${now})`,
    tx`INSERT INTO usage_daily AS u (account_id, environment, day, model, requests, prompt_tokens, completion_tokens, credits)
       VALUES (${hold.accountId}, ${hold.environment}, ${day}, ${usage.model}, 1, ${usage.promptTokens}, ${usage.completionTokens}, ${credits})
       ON CONFLICT (account_id, environment, day, model) DO UPDATE SET
         requests = u.requests + 1,
         prompt_tokens = u.prompt_tokens + excluded.prompt_tokens,
         completion_tokens = u.completion_tokens + excluded.completion_tokens,
         credits = u.credits + excluded.credits`,
  ]);
}

export class PostgresUsageStore implements UsageStore {
  constructor(private readonly sql: PgSql) {}

  async rollup(query: UsageQuery): Promise<UsageDayRow[]> {
    // Days are zero-padded ISO strings in a "C"-collated column, so text comparison is chronological.
    const rows = await guard(
      () => this.sql<UsageDailyRow[]>`
      SELECT day, model, requests, prompt_tokens, completion_tokens, credits FROM usage_daily
      WHERE account_id = ${query.accountId} AND environment = ${query.environment}
        AND day >= ${query.startDay} AND day <= ${query.endDay}
        AND (${query.model}::text IS NULL OR model = ${query.model})
      ORDER BY day, model`,
    );
    return rows.map(toUsageDay);
  }
}
