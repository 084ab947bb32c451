/**
 * Gemini's documented rules (docs/attachments.md cites them). Images: Gemini 2 counts 258 tokens when both
 * sides are at most 384 px, otherwise 258 per tile, where the API docs tile by 768 px and Vertex AI's docs by a crop
 * unit of min(width, height) / 1.5; Gemini 3 spends up to 1,120 tokens an image at its default media
 * resolution. The hold takes the largest of the three. Audio 32 tokens a second, video about 300 (263 as
 * likely), a PDF page 560 at Gemini 3's default document resolution (258 as likely, Gemini 2's figure).
 *
 * A URL is fetched by Gemini itself and billed as whatever it turns out to be (a video as well as an
 * image), with no cap, so no URL is bounded here; URLs that are not http(s), and `file_id`s, are refused
 * by the adapter and cost nothing.
 */
import type { ImageSize } from './image-size.js';
import type { MediaRules } from './media-rules.js';
import { audioSecondsBySize, fileTokensBySize, pdfPagesBySize, range, videoSecondsBySize, ZERO, type TokenRange } from './size-bounds.js';

const PER_TILE = 258;
const GEMINI_3_IMAGE = 1120;
/** An image whose header cannot be read: 16 tiles (3,072 px square) held, Gemini 3's default as likely. */
const UNREADABLE_IMAGE: TokenRange = { likely: GEMINI_3_IMAGE, upper: 16 * PER_TILE };
/** Absurd sizes still give a finite number (the context-window check then refuses the request). */
const MAX_IMAGE_TOKENS = 10_000_000;
const AUDIO_PER_SECOND = 32;
const VIDEO_PER_SECOND = { likely: 263, upper: 300 };
const PDF_PER_PAGE = { likely: 258, upper: 560 };

export function geminiRules(): MediaRules {
  return {
    id: 'gemini',
    estimate(fact): TokenRange | null {
      switch (fact.type) {
        case 'image': {
          if (fact.size === null) return UNREADABLE_IMAGE;
          const t = geminiImageTokens(fact.size);
          return { likely: t, upper: t };
        }
        case 'image-url':
          return fact.fetchable ? null : ZERO;
        case 'audio': {
          const bySize = audioSecondsBySize(fact.seconds === null ? fact.bytes : fact.unreadBytes);
          const known = fact.seconds ?? 0;
          return range((known + bySize.likely) * AUDIO_PER_SECOND, (known + bySize.upper) * AUDIO_PER_SECOND);
        }
        case 'video': {
          const s = fact.seconds === null ? videoSecondsBySize(fact.bytes) : { likely: fact.seconds, upper: fact.seconds };
          return range(s.likely * VIDEO_PER_SECOND.likely, s.upper * VIDEO_PER_SECOND.upper);
        }
        case 'pdf': {
          const pages = fact.pages === null ? pdfPagesBySize(fact.bytes) : { likely: fact.pages, upper: fact.pages };
          return range(pages.likely * PDF_PER_PAGE.likely, pages.upper * PDF_PER_PAGE.upper);
        }
        case 'file':
          return fileTokensBySize(fact.bytes);
        case 'remote':
          return null;
        case 'stored-file':
          return ZERO;
      }
    },
  };
}

export function geminiImageTokens(size: ImageSize): number {
  const { width: w, height: h } = size;
  // Gemini 3 gives even a small image its whole default budget.
  if (w <= 384 && h <= 384) return GEMINI_3_IMAGE;
  const byTiles = Math.ceil(w / 768) * Math.ceil(h / 768);
  const cropUnit = Math.max(1, Math.floor(Math.min(w, h) / 1.5));
  const byCropUnit = Math.ceil(w / cropUnit) * Math.ceil(h / cropUnit);
  return Math.min(MAX_IMAGE_TOKENS, Math.max(GEMINI_3_IMAGE, PER_TILE * Math.max(byTiles, byCropUnit)));
}
