const DAY_MS = 86_400_000;

/** The last day computed, with its bounds: every reserve and settle asks, almost always for today. */
let cached = { start: 0, end: 0, day: '1970-01-01' };

/** The UTC day (`YYYY-MM-DD`) of an epoch-ms instant: the unit of daily caps and usage rollups. */
export function utcDay(ms: number): string {
  if (ms >= cached.start && ms < cached.end) return cached.day;
  const day = new Date(ms).toISOString().slice(0, 10);
  // UTC days have no leap seconds or DST in epoch ms: each is exactly DAY_MS long.
  const start = Math.floor(ms / DAY_MS) * DAY_MS;
  if (Number.isFinite(start)) cached = { start, end: start + DAY_MS, day };
  return day;
}
