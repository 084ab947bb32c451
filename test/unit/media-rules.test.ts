/**
 * The per-provider token rules against the worked examples of the providers' own documentation
 * (docs/attachments.md cites them), and the choice of rules by protocol and model name.
 */
import { describe, expect, it } from 'vitest';
import { ANTHROPIC_RESIZE, anthropicImageTokens, resizeRuleOf } from '../../src/billing/media/anthropic-rules.js';
import { geminiImageTokens } from '../../src/billing/media/gemini-rules.js';
import type { MediaFact } from '../../src/billing/media/media-facts.js';
import { mediaRulesFor } from '../../src/billing/media/media-rules.js';
import { imageTokens, openAIImageRulesOf } from '../../src/billing/media/openai-rules.js';
import type { ProviderProtocol } from '../../src/providers/contract.js';

const image = (width: number, height: number, detail: 'auto' | 'low' | 'high' = 'auto'): MediaFact => ({
  type: 'image',
  size: { width, height },
  detail,
  bytes: 1000,
});
const upper = (protocol: ProviderProtocol, model: string, fact: MediaFact): number | null => mediaRulesFor(protocol, model).estimate(fact)?.upper ?? null;

describe('OpenAI', () => {
  it('tiles: the documented examples (GPT-4o)', () => {
    expect(upper('openai-compatible', 'gpt-4o', image(1024, 1024, 'high'))).toBe(765);
    expect(upper('openai-compatible', 'gpt-4o', image(2048, 4096, 'high'))).toBe(1105);
    expect(upper('openai-compatible', 'gpt-4o', image(4096, 8192, 'low'))).toBe(85);
    expect(upper('openai-compatible', 'gpt-4o-2024-08-06', image(512, 512))).toBe(85 + 170);
  });
  it('tiles with per-model base and tile costs', () => {
    expect(upper('openai-compatible', 'gpt-4o-mini', image(1024, 1024))).toBe(2833 + 4 * 5667);
    expect(upper('openai-compatible', 'gpt-5', image(1024, 1024))).toBe(70 + 4 * 140);
    expect(upper('openai-compatible', 'o3', image(1024, 1024))).toBe(75 + 4 * 150);
    expect(upper('openai-compatible', 'openrouter/openai/gpt-4.1', image(1024, 1024))).toBe(765);
  });
  it('patches: the documented examples, times the model multiplier', () => {
    const [rule] = openAIImageRulesOf('gpt-4.1-mini');
    expect(rule).toEqual({ kind: 'patches', multiplier: 1.62 });
    // 1024 x 1024: 32 x 32 = 1,024 patches. 1800 x 2400: shrunk to 1,452 patches (OpenAI's example).
    expect(imageTokens({ kind: 'patches', multiplier: 1 }, { width: 1024, height: 1024 }, 'auto')).toBe(1024);
    expect(imageTokens({ kind: 'patches', multiplier: 1 }, { width: 1800, height: 2400 }, 'auto')).toBe(1452);
    expect(upper('openai-compatible', 'gpt-4.1-mini', image(1800, 2400))).toBe(Math.ceil(1452 * 1.62));
    expect(upper('openai-compatible', 'gpt-5-nano', image(1024, 1024))).toBe(Math.ceil(1024 * 2.46));
    expect(upper('openai-compatible', 'o4-mini', image(64, 64))).toBe(Math.ceil(4 * 1.72));
  });
  it('an unknown model (and the sandbox) takes the larger of both general rules', () => {
    expect(upper('openai-compatible', 'llama3.2-vision', image(1024, 1024))).toBe(1024); // patches beat 765
    expect(upper('sandbox', 'sandbox-fast', image(300, 100))).toBe(85 + 170); // one tile beats 40 patches
  });
  it('bounds images it cannot see: URLs and unreadable headers cost the largest image', () => {
    const url: MediaFact = { type: 'image-url', detail: 'auto', fetchable: true };
    expect(upper('openai-compatible', 'gpt-4o', url)).toBe(85 + 8 * 170);
    expect(upper('openai-compatible', 'gpt-4o', { type: 'image-url', detail: 'low', fetchable: true })).toBe(85);
    expect(upper('openai-compatible', 'gpt-4.1-nano', { type: 'image', size: null, detail: 'auto', bytes: 9 })).toBe(Math.ceil(1536 * 2.46));
  });
  it('no image ever costs more than the largest one, whatever its shape', () => {
    for (const [w, h] of [[768, 2048], [1, 100_000], [100_000, 1], [4000, 3000], [10, 10]] as const) {
      expect(upper('openai-compatible', 'gpt-4o', image(w, h))).toBeLessThanOrEqual(85 + 8 * 170);
      expect(upper('openai-compatible', 'gpt-4.1-mini', image(w, h))).toBeLessThanOrEqual(Math.ceil(1536 * 1.62));
    }
  });
});

describe('Anthropic', () => {
  it('width x height / 750 after the resize', () => {
    // Anthropic's table: 1092 x 1092 is about 1,590 tokens; 200 x 200 about 54.
    expect(anthropicImageTokens(ANTHROPIC_RESIZE.UP_TO_4_6, { width: 1092, height: 1092 })).toBe(1590);
    expect(anthropicImageTokens(ANTHROPIC_RESIZE.UP_TO_4_6, { width: 200, height: 200 })).toBe(54);
    // Bigger images are scaled down to about 1,600 tokens (1,568 px edge), or 5,000 (3.75 MP) from 4.7 on.
    expect(anthropicImageTokens(ANTHROPIC_RESIZE.UP_TO_4_6, { width: 4000, height: 3000 })).toBeLessThanOrEqual(1600);
    expect(anthropicImageTokens(ANTHROPIC_RESIZE.UP_TO_4_6, { width: 4000, height: 3000 })).toBeGreaterThan(1580);
    expect(anthropicImageTokens(ANTHROPIC_RESIZE.FROM_4_7, { width: 4000, height: 3000 })).toBeLessThanOrEqual(5000);
    expect(anthropicImageTokens(ANTHROPIC_RESIZE.FROM_4_7, { width: 1000, height: 1000 })).toBe(1334);
  });
  it('chooses the resize by model, the larger one when unsure', () => {
    expect(resizeRuleOf('claude-3-5-sonnet-20241022')).toBe(ANTHROPIC_RESIZE.UP_TO_4_6);
    expect(resizeRuleOf('claude-sonnet-4-20250514')).toBe(ANTHROPIC_RESIZE.UP_TO_4_6);
    expect(resizeRuleOf('claude-haiku-4-5-20251001')).toBe(ANTHROPIC_RESIZE.UP_TO_4_6);
    expect(resizeRuleOf('claude-opus-4-7')).toBe(ANTHROPIC_RESIZE.FROM_4_7);
    expect(resizeRuleOf('claude-sonnet-5')).toBe(ANTHROPIC_RESIZE.FROM_4_7);
    expect(resizeRuleOf('my-proxy-model')).toBe(ANTHROPIC_RESIZE.FROM_4_7);
  });
  it('image URLs are bounded; what the adapter refuses costs nothing; linked media is unbounded', () => {
    expect(upper('anthropic', 'claude-opus-4-7', { type: 'image-url', detail: 'auto', fetchable: true })).toBe(5000);
    expect(upper('anthropic', 'claude-3-haiku', { type: 'image-url', detail: 'auto', fetchable: true })).toBe(1600);
    expect(upper('anthropic', 'claude-opus-4-7', { type: 'audio', seconds: 60, unreadBytes: 0, bytes: 1e6 })).toBe(0);
    expect(upper('anthropic', 'claude-opus-4-7', { type: 'stored-file' })).toBe(0);
    expect(upper('anthropic', 'claude-opus-4-7', { type: 'remote', what: 'video' })).toBeNull();
  });
});

describe('Gemini', () => {
  it('the largest of the 768 px tiles, the crop-unit tiles and Gemini 3 default budget', () => {
    expect(geminiImageTokens({ width: 384, height: 384 })).toBe(1120);
    expect(geminiImageTokens({ width: 1024, height: 1024 })).toBe(1120); // 4 tiles = 1,032 either way
    // 3000 x 1000: 4 x 2 tiles of 768 px = 2,064; crop unit 666 px: 5 x 2 = 2,580.
    expect(geminiImageTokens({ width: 3000, height: 1000 })).toBe(2580);
    expect(geminiImageTokens({ width: 100_000, height: 1 })).toBe(10_000_000); // capped, finite
  });
  it('audio 32/s, video 300/s, PDF pages 560; no URL is bounded', () => {
    expect(upper('gemini', 'gemini-2.5-flash', { type: 'audio', seconds: 10, unreadBytes: 0, bytes: 1 })).toBe(320);
    expect(upper('gemini', 'gemini-2.5-flash', { type: 'video', seconds: 6, bytes: 1 })).toBe(1800);
    expect(mediaRulesFor('gemini', 'x').estimate({ type: 'pdf', pages: 5, bytes: 1 })).toEqual({ likely: 5 * 258, upper: 5 * 560 });
    expect(upper('gemini', 'x', { type: 'image-url', detail: 'auto', fetchable: true })).toBeNull();
    expect(upper('gemini', 'x', { type: 'image-url', detail: 'auto', fetchable: false })).toBe(0);
  });
});

describe('size bounds when a header cannot be read', () => {
  it('holds the densest plausible encoding and checks the window on an ordinary one', () => {
    const audio = mediaRulesFor('gemini', 'x').estimate({ type: 'audio', seconds: null, unreadBytes: 0, bytes: 750_000 });
    expect(audio).toEqual({ likely: Math.ceil((750_000 / 4_000) * 32), upper: 1_000 * 32 }); // 6 kbit/s: 1,000 s
    const pdf = mediaRulesFor('openai-compatible', 'gpt-4o').estimate({ type: 'pdf', pages: null, bytes: 1_000_000 });
    expect(pdf).toEqual({ likely: 20 * (500 + 765), upper: 500 * (1_000 + 765) }); // 50 KB and 2 KB a page
    expect(mediaRulesFor('openai-compatible', 'gpt-4o').estimate({ type: 'file', bytes: 3_000 })).toEqual({ likely: 750, upper: 1000 });
    // A partly read MP3: the unread tail counts at the size rate on top of what was read.
    const partial = mediaRulesFor('openai-compatible', 'gpt-4o').estimate({ type: 'audio', seconds: 10, unreadBytes: 7_500, bytes: 50_000 });
    expect(partial?.upper).toBe((10 + 10) * 10);
  });
});
