/**
 * Bounds from byte size alone, for attachments whose duration or page count could not be read. Two
 * figures each: `upper` feeds the hold and assumes the densest plausible encoding (the most seconds or
 * pages per byte), `likely` feeds the context-window check and assumes an ordinary one. Documented in
 * docs/attachments.md ("When a header cannot be read").
 */

export interface TokenRange {
  /** The realistic size: what the context-window check uses. */
  likely: number;
  /** The most it may cost: what the hold covers. */
  upper: number;
}

export const ZERO: TokenRange = { likely: 0, upper: 0 };

export function range(likely: number, upper: number): TokenRange {
  return { likely: Math.ceil(Math.min(likely, upper)), upper: Math.ceil(upper) };
}

export function addRanges(a: TokenRange, b: TokenRange): TokenRange {
  return { likely: a.likely + b.likely, upper: a.upper + b.upper };
}

/** Audio: 6 kbit/s (Opus speech at its lowest) for the hold, 32 kbit/s (ordinary compressed speech) as likely. */
export function audioSecondsBySize(bytes: number): TokenRange {
  return { likely: bytes / 4_000, upper: bytes / 750 };
}

/** Video: 20 kbit/s (a nearly still picture) for the hold, 1 Mbit/s as likely. */
export function videoSecondsBySize(bytes: number): TokenRange {
  return { likely: bytes / 125_000, upper: bytes / 2_500 };
}

/**
 * PDF pages: 2 KB a page for the hold (a page of plain text in a compressed object stream), 50 KB a page
 * as likely (text documents with their fonts; scans are far larger per page).
 */
export function pdfPagesBySize(bytes: number): TokenRange {
  return { likely: Math.max(1, Math.ceil(bytes / 50_000)), upper: Math.max(1, Math.ceil(bytes / 2_000)) };
}

/** Other files are read as text by the providers that take them: bytes / 3 held, bytes / 4 likely. */
export function fileTokensBySize(bytes: number): TokenRange {
  return range(bytes / 4, bytes / 3);
}
