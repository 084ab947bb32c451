import type { UsageDayRow } from '../store/types.js';
import type { Period } from './period.js';

interface Totals {
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  credits: number;
}

const zero = (): Totals => ({ requests: 0, prompt_tokens: 0, completion_tokens: 0, credits: 0 });

function add(t: Totals, r: UsageDayRow): void {
  t.requests += r.requests;
  t.prompt_tokens += r.promptTokens;
  t.completion_tokens += r.completionTokens;
  t.credits += r.credits;
}

/** Folds the daily rollup rows into the body of GET /v1/usage (documented in docs/api.md). */
export function usageReport(base: Record<string, unknown>, period: Period, rows: readonly UsageDayRow[]): Record<string, unknown> {
  const total = zero();
  const byModel: Record<string, Totals> = {};
  const byDay = new Map<string, Totals>();
  for (const r of rows) {
    add(total, r);
    add((byModel[r.model] ??= zero()), r);
    let d = byDay.get(r.day);
    if (!d) byDay.set(r.day, (d = zero()));
    add(d, r);
  }
  return {
    object: 'usage',
    ...base,
    period_start: `${period.startDay}T00:00:00Z`,
    period_end: `${period.endDay}T23:59:59Z`,
    total_requests: total.requests,
    total_prompt_tokens: total.prompt_tokens,
    total_completion_tokens: total.completion_tokens,
    total_credits_spent: total.credits,
    // The name this field had before it followed the specification (2.6); kept for existing clients.
    total_credits: total.credits,
    breakdown_by_model: byModel,
    breakdown_by_day: [...byDay].map(([date, t]) => ({ date, ...t })),
  };
}
