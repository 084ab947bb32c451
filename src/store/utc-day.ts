/** The UTC day (`YYYY-MM-DD`) of an epoch-ms instant: the unit of daily caps and usage rollups. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
