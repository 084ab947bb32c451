import {
  USAGE_EVENT_COLUMNS,
  type UsageDailyRow,
  type UsageEventDbRow,
  checkUsageEventQuery,
  toUsageDay,
  toUsageEvent,
  usageEventCursor,
} from '../rows.js';
import type { UsageDayRow, UsageEventQuery, UsageEventRow, UsageQuery, UsageStore } from '../types.js';
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

  async events(query: UsageEventQuery): Promise<UsageEventRow[]> {
    checkUsageEventQuery(query);
    const cursor = usageEventCursor(query);
    // The row comparison and the bounds are one range of usage_events_by_time (created_at, id); the owner
    // filters are checked on the rows that range reads.
    const rows = await guard(
      () => this.sql<UsageEventDbRow[]>`
      SELECT ${this.sql.unsafe(USAGE_EVENT_COLUMNS)} FROM usage_events
      WHERE created_at >= ${query.startMs} AND created_at < ${query.endMs}
        AND (created_at, id) > (${cursor.at}::bigint, ${cursor.id}::bigint)
        AND (${query.accountId}::text IS NULL OR account_id = ${query.accountId})
        AND (${query.environment}::text IS NULL OR environment = ${query.environment})
      ORDER BY created_at, id
      LIMIT ${query.limit}`,
    );
    return rows.map(toUsageEvent);
  }
}
