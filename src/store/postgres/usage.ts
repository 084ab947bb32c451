import { type UsageDailyRow, toUsageDay } from '../rows.js';
import type { UsageDayRow, UsageQuery, UsageStore } from '../types.js';
import type { PgSql } from './database.js';
import { guard } from './errors.js';

export class PostgresUsageStore implements UsageStore {
  constructor(private readonly sql: PgSql) {}

  async rollup(query: UsageQuery): Promise<UsageDayRow[]> {
    // Days are zero-padded ISO strings in a "C"-collated column, so text comparison is chronological.
    const rows = await guard(
      () => this.sql<UsageDailyRow[]>`
      SELECT day, model, requests, prompt_tokens, completion_tokens, cached_tokens, reasoning_tokens, credits FROM usage_daily
      WHERE account_id = ${query.accountId} AND environment = ${query.environment}
        AND day >= ${query.startDay} AND day <= ${query.endDay}
        AND (${query.model}::text IS NULL OR model = ${query.model})
      ORDER BY day, model`,
    );
    return rows.map(toUsageDay);
  }
}
