/**
 * OpenAI's documented image, audio and PDF token rules (docs/attachments.md cites them), also used for
 * the sandbox and for any OpenAI-compatible server whose model the table does not know.
 *
 * Images, two families:
 * - tiles (GPT-4o, GPT-4.1, GPT-4.5, GPT-5, o1, o3): `detail: low` costs the base; otherwise the image is
 *   fitted in 2048 x 2048, its shortest side brought down to 768, and each 512 px tile costs `tile` on top
 *   of `base`. At most 8 tiles (768 x 2048), so any image costs at most base + 8 x tile.
 * - patches (GPT-4.1 mini/nano, GPT-5 mini/nano, o4-mini): 32 px patches, the image shrunk to fit a budget
 *   of 1,536 patches, times a per-model multiplier.
 */
import type { MediaRules } from './media-rules.js';
import type { ImageSize } from './image-size.js';
import { audioSecondsBySize, fileTokensBySize, pdfPagesBySize, range, videoSecondsBySize, ZERO, type TokenRange } from './size-bounds.js';

type ImageRule = { kind: 'tiles'; base: number; tile: number } | { kind: 'patches'; multiplier: number };

const PATCH_BUDGET = 1536;
const TILES_85_170: ImageRule = { kind: 'tiles', base: 85, tile: 170 };

/** Model families by name, most specific first; a provider prefix (`openai/gpt-4o`) is ignored. */
const FAMILIES: readonly { pattern: RegExp; rules: readonly ImageRule[] }[] = [
  { pattern: /^gpt-4o-mini/, rules: [{ kind: 'tiles', base: 2833, tile: 5667 }] },
  { pattern: /^(gpt-4\.1-mini|gpt-5-mini)/, rules: [{ kind: 'patches', multiplier: 1.62 }] },
  { pattern: /^(gpt-4\.1-nano|gpt-5-nano)/, rules: [{ kind: 'patches', multiplier: 2.46 }] },
  { pattern: /^o4-mini/, rules: [{ kind: 'patches', multiplier: 1.72 }] },
  { pattern: /^(o1|o3)(-|$)/, rules: [{ kind: 'tiles', base: 75, tile: 150 }] },
  { pattern: /^computer-use/, rules: [{ kind: 'tiles', base: 65, tile: 129 }] },
  { pattern: /^gpt-5/, rules: [{ kind: 'tiles', base: 70, tile: 140 }] },
  { pattern: /^(gpt-4o|gpt-4\.1|gpt-4\.5|gpt-4-turbo|chatgpt-4o)/, rules: [TILES_85_170] },
];
/** An unknown model (another server, a newer model): the larger of the two general rules. */
const UNKNOWN: readonly ImageRule[] = [TILES_85_170, { kind: 'patches', multiplier: 1 }];

/** Audio input: 1 token per 100 ms (OpenAI's realtime cost guide, the same audio tokenizer). */
const AUDIO_TOKENS_PER_SECOND = 10;
/** Video is not an OpenAI input; a compatible server that takes it is held like Gemini (1 frame/s). */
const VIDEO_TOKENS_PER_SECOND = 300;
/**
 * A PDF page is its extracted text plus an image of the page (OpenAI's PDF guide). Text: up to 1,000
 * tokens held (a dense page), 500 likely. The page image: a letter page rendered at 150 dpi.
 */
const PDF_TEXT_PER_PAGE = { likely: 500, upper: 1_000 };
export const PAGE_IMAGE: ImageSize = { width: 1275, height: 1650 };

export function openAIRules(model: string): MediaRules {
  const name = model.slice(model.lastIndexOf('/') + 1).toLowerCase();
  const family = FAMILIES.find((f) => f.pattern.test(name));
  const rules = family?.rules ?? UNKNOWN;
  const id = `openai:${rules.map(ruleId).join('+')}`;
  const image = (size: ImageSize | null, detail: 'auto' | 'low' | 'high'): number =>
    Math.max(...rules.map((r) => (size === null ? largestImage(r, detail) : imageTokens(r, size, detail))));
  return {
    id,
    estimate(fact) {
      switch (fact.type) {
        case 'image':
          return sameRange(image(fact.size, fact.detail));
        case 'image-url':
          // OpenAI downsizes every image it fetches, so the largest image is a bound.
          return sameRange(image(null, fact.detail));
        case 'audio': {
          const bySize = audioSecondsBySize(fact.seconds === null ? fact.bytes : fact.unreadBytes);
          const known = fact.seconds ?? 0;
          return range((known + bySize.likely) * AUDIO_TOKENS_PER_SECOND, (known + bySize.upper) * AUDIO_TOKENS_PER_SECOND);
        }
        case 'video': {
          const s = fact.seconds === null ? videoSecondsBySize(fact.bytes) : { likely: fact.seconds, upper: fact.seconds };
          return range(s.likely * VIDEO_TOKENS_PER_SECOND, s.upper * VIDEO_TOKENS_PER_SECOND);
        }
        case 'pdf': {
          const pages = fact.pages === null ? pdfPagesBySize(fact.bytes) : { likely: fact.pages, upper: fact.pages };
          const perPageImage = image(PAGE_IMAGE, 'high');
          return range(pages.likely * (PDF_TEXT_PER_PAGE.likely + perPageImage), pages.upper * (PDF_TEXT_PER_PAGE.upper + perPageImage));
        }
        case 'file':
          return fileTokensBySize(fact.bytes);
        case 'remote':
        case 'stored-file':
          return null;
      }
    },
  };
}

function ruleId(r: ImageRule): string {
  return r.kind === 'tiles' ? `tiles-${r.base}-${r.tile}` : `patches-x${r.multiplier}`;
}

function sameRange(tokens: number): TokenRange {
  return tokens === 0 ? ZERO : { likely: tokens, upper: tokens };
}

/** Ceiling that forgives floating-point noise (33.000000001 patches are 33). */
function ceil(x: number): number {
  return Math.ceil(x - 1e-9);
}

export function imageTokens(rule: ImageRule, size: ImageSize, detail: 'auto' | 'low' | 'high'): number {
  if (rule.kind === 'tiles') {
    if (detail === 'low') return rule.base;
    let { width: w, height: h } = size;
    const fit = Math.min(1, 2048 / Math.max(w, h));
    w *= fit;
    h *= fit;
    const shortest = Math.min(w, h);
    if (shortest > 768) {
      w *= 768 / shortest;
      h *= 768 / shortest;
    }
    return rule.base + rule.tile * ceil(w / 512) * ceil(h / 512);
  }
  const { width: w, height: h } = size;
  let patches = ceil(w / 32) * ceil(h / 32);
  if (patches > PATCH_BUDGET) {
    // OpenAI's published steps: shrink to the budget, then once more so whole patches fit each side.
    const shrink = Math.sqrt((PATCH_BUDGET * 32 * 32) / (w * h));
    const adjusted = shrink * Math.min(Math.floor((w * shrink) / 32) / ((w * shrink) / 32), Math.floor((h * shrink) / 32) / ((h * shrink) / 32));
    patches = Math.min(PATCH_BUDGET, ceil((w * adjusted) / 32) * ceil((h * adjusted) / 32));
  }
  return Math.ceil(Math.max(1, patches) * rule.multiplier);
}

function largestImage(rule: ImageRule, detail: 'auto' | 'low' | 'high'): number {
  if (rule.kind === 'tiles') return detail === 'low' ? rule.base : rule.base + 8 * rule.tile;
  return Math.ceil(PATCH_BUDGET * rule.multiplier);
}

/** For tests and docs: the image rules the table assigns to a model name. */
export function openAIImageRulesOf(model: string): readonly ImageRule[] {
  const name = model.slice(model.lastIndexOf('/') + 1).toLowerCase();
  return FAMILIES.find((f) => f.pattern.test(name))?.rules ?? UNKNOWN;
}
