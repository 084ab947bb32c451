/**
 * The reporting period of GET /v1/usage: inclusive UTC days. Defaults: the 30 days ending today; with
 * only start_date, up to today; with only end_date, the 30 days ending then. At most 366 days.
 */
import { invalidRequest } from '../openai/errors.js';

const DAY_MS = 86_400_000;
export const DEFAULT_DAYS = 30;
export const MAX_DAYS = 366;

export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

function parseDay(value: string, param: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  const ms = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : NaN;
  if (!m || Number.isNaN(ms) || utcDay(ms) !== value) {
    throw invalidRequest(`Invalid '${param}': '${value}' is not a calendar date in the form YYYY-MM-DD.`, param, 'invalid_date');
  }
  return ms;
}

export interface Period {
  startDay: string;
  endDay: string;
}

export function resolvePeriod(start: string | undefined, end: string | undefined, nowMs: number): Period {
  const today = Date.parse(utcDay(nowMs));
  const endMs = end !== undefined ? parseDay(end, 'end_date') : start !== undefined ? Math.max(today, parseDay(start, 'start_date')) : today;
  const startMs = start !== undefined ? parseDay(start, 'start_date') : endMs - (DEFAULT_DAYS - 1) * DAY_MS;
  if (endMs < startMs) throw invalidRequest("'end_date' is before 'start_date'.", 'end_date', 'invalid_date_range');
  if ((endMs - startMs) / DAY_MS + 1 > MAX_DAYS) {
    throw invalidRequest(`The period is longer than ${MAX_DAYS} days; ask for a shorter range.`, 'start_date', 'invalid_date_range');
  }
  return { startDay: utcDay(startMs), endDay: utcDay(endMs) };
}
