/**
 * Anthropic's documented rules (docs/attachments.md cites them). An image costs width x height / 750
 * tokens after Anthropic's own resize: the long edge to at most 1,568 px and the area to about 1,600
 * tokens (1.2 MP) for Claude models up to 4.6; 2,576 px and 3.75 MP for Claude 4.7 and later, and for any
 * model name the table does not recognise (the larger bound). Every image is bounded, so image URLs are
 * too. A PDF page is its text (1,500 to 3,000 tokens a page in Anthropic's words) plus an image of the
 * page. The adapter refuses audio, video, non-PDF files and `file_id`s, so those cost nothing here.
 */
import type { ImageSize } from './image-size.js';
import type { MediaRules } from './media-rules.js';
import { PAGE_IMAGE } from './openai-rules.js';
import { pdfPagesBySize, range, ZERO, type TokenRange } from './size-bounds.js';

interface ResizeRule {
  maxEdge: number;
  maxPixels: number;
}

const UP_TO_4_6: ResizeRule = { maxEdge: 1568, maxPixels: 1600 * 750 };
const FROM_4_7: ResizeRule = { maxEdge: 2576, maxPixels: 3_750_000 };
const PIXELS_PER_TOKEN = 750;
const PDF_TEXT_PER_PAGE = { likely: 1_500, upper: 3_000 };

export function anthropicRules(model: string): MediaRules {
  const rule = resizeRuleOf(model);
  const id = rule === UP_TO_4_6 ? 'anthropic:1568px' : 'anthropic:2576px';
  const largest = Math.ceil(rule.maxPixels / PIXELS_PER_TOKEN);
  return {
    id,
    estimate(fact): TokenRange | null {
      switch (fact.type) {
        case 'image': {
          const t = fact.size === null ? largest : anthropicImageTokens(rule, fact.size);
          return { likely: t, upper: t };
        }
        case 'image-url':
          return { likely: largest, upper: largest };
        case 'pdf': {
          const pages = fact.pages === null ? pdfPagesBySize(fact.bytes) : { likely: fact.pages, upper: fact.pages };
          const pageImage = anthropicImageTokens(rule, PAGE_IMAGE);
          return range(pages.likely * (PDF_TEXT_PER_PAGE.likely + pageImage), pages.upper * (PDF_TEXT_PER_PAGE.upper + pageImage));
        }
        case 'remote':
          return null;
        case 'audio':
        case 'video':
        case 'file':
        case 'stored-file':
          return ZERO;
      }
    },
  };
}

export function anthropicImageTokens(rule: ResizeRule, size: ImageSize): number {
  const { width: w, height: h } = size;
  const scale = Math.min(1, rule.maxEdge / Math.max(w, h), Math.sqrt(rule.maxPixels / (w * h)));
  const rw = Math.max(1, Math.floor(w * scale));
  const rh = Math.max(1, Math.floor(h * scale));
  return Math.min(Math.ceil(rule.maxPixels / PIXELS_PER_TOKEN), Math.ceil((rw * rh) / PIXELS_PER_TOKEN));
}

/** Claude 3.x and 4.0 to 4.6 use the smaller resize; anything else (4.7+, 5, unknown) the larger one. */
export function resizeRuleOf(model: string): ResizeRule {
  const name = model.slice(model.lastIndexOf('/') + 1).toLowerCase();
  if (/^claude-3/.test(name)) return UP_TO_4_6;
  const m = /^claude-(?:opus|sonnet|haiku)-(\d+)(?:-(\d)(?!\d))?/.exec(name);
  if (m && Number(m[1]) === 4 && Number(m[2] ?? 0) <= 6) return UP_TO_4_6;
  return FROM_4_7;
}

export const ANTHROPIC_RESIZE = { UP_TO_4_6, FROM_4_7 } as const;
