import { describe, expect, it } from 'vitest';
import { creditCost } from '../../src/billing/pricing.js';
import { promptTokensFor, quoteRequest, type QuoteRoute } from '../../src/billing/quote.js';
import { estimatePromptTokens, estimateTextPromptTokens, estimateTextTokens } from '../../src/billing/token-estimate.js';
import type { ChatRequest, ContentPart } from '../../src/openai/chat-types.js';
import { GatewayError } from '../../src/openai/errors.js';
import type { ProviderProtocol } from '../../src/providers/contract.js';
import { CATALOG, type Alias } from '../../src/routing/catalog.js';
import { pdfBase64 } from './media-builders.js';

const req = (content: string | ContentPart[], max_tokens: number | null): ChatRequest => ({
  model: 'svc-fast',
  messages: [{ role: 'user', content }],
  temperature: 0.7,
  top_p: 1,
  max_tokens,
  stream: false,
  include_usage: false,
});

const target = (protocol: ProviderProtocol, model: string, name: string = protocol) => ({ adapter: { name, protocol }, model });
const route = (alias: Alias, targets = [target('sandbox', 'sandbox-fast')], defaultMaxTokens = 2048): QuoteRoute => ({
  entry: CATALOG[alias],
  defaultMaxTokens,
  targets,
});

describe('pricing', () => {
  it('rounds the total up once, not each part', () => {
    // 1 x 4 + 1 x 12 = 16 -> ceil(16/1000) = 1; 1000 prompt tokens at svc-smart = 25 exactly.
    expect(creditCost(CATALOG['svc-fast'], 1, 1)).toBe(1);
    expect(creditCost(CATALOG['svc-smart'], 1000, 0)).toBe(25);
    expect(creditCost(CATALOG['svc-smart'], 1001, 0)).toBe(26);
    expect(creditCost(CATALOG['svc-code'], 500, 500)).toBe(26);
    expect(creditCost(CATALOG['svc-auto'], 0, 0)).toBe(0);
  });
});

describe('token estimate', () => {
  it('counts bytes, so non-ASCII text is not under-estimated', () => {
    expect(estimateTextTokens('abc')).toBe(1);
    expect(estimateTextTokens('日本語')).toBe(3);
    expect(estimateTextTokens('')).toBe(0);
  });
  it('adds framing per message; attachments are not text', () => {
    expect(estimateTextPromptTokens([{ role: 'user', content: 'abcdef' }])).toBe(3 + 4 + 2);
    const image: ContentPart = { type: 'image_url', image_url: { url: 'https://x/y.png' } };
    expect(estimateTextPromptTokens([{ role: 'user', content: [image] }])).toBe(3 + 4);
    // The sandbox's own count: an image URL is at most OpenAI's largest image (general rules: 1,536 patches).
    expect(estimatePromptTokens([{ role: 'user', content: [image] }])).toBe(3 + 4 + 1536);
  });
});

describe('quote', () => {
  it('holds prompt plus the client bound', async () => {
    const q = await quoteRequest(route('svc-fast'), req('hello there', 100));
    expect(q.maxOutputTokens).toBe(100);
    expect(q.worstCaseCredits).toBe(creditCost(CATALOG['svc-fast'], q.promptTokens, 100));
    expect(q.likelyPromptTokens).toBe(q.promptTokens);
  });
  it('uses the alias default bound when none is given, within the window', async () => {
    expect((await quoteRequest(route('svc-fast'), req('hi', null))).maxOutputTokens).toBe(2048);
    const long = 'x'.repeat(3 * 63_000);
    const q = await quoteRequest(route('svc-fast'), req(long, null));
    expect(q.promptTokens + q.maxOutputTokens).toBe(64_000);
  });
  it('refuses what cannot fit the context window', async () => {
    await expect(quoteRequest(route('svc-fast'), req('x'.repeat(3 * 64_000), null))).rejects.toThrowError(GatewayError);
    await expect(quoteRequest(route('svc-fast'), req('hi', 64_000))).rejects.toThrowError(/Lower max_tokens/);
  });

  it('holds the worst target of the route and checks the window on the least', async () => {
    // A 40-page PDF: Anthropic (up to 3,000 text + 2,805 page-image tokens a page for Claude 4.7+) counts
    // most, Gemini (258 likely, 560 held) least.
    const pdf: ContentPart = { type: 'file', file: { file_data: `data:application/pdf;base64,${pdfBase64(40)}` } };
    const r = route('svc-smart', [target('anthropic', 'claude-opus-4-7'), target('gemini', 'gemini-3-pro'), target('openai-compatible', 'gpt-4o')]);
    const q = await quoteRequest(r, req([{ type: 'text', text: 'Summarize.' }, pdf], 1));
    const text = estimateTextPromptTokens(req([{ type: 'text', text: 'Summarize.' }], 1).messages);
    expect(q.promptTokens).toBe(text + 40 * (3_000 + 2_805));
    expect(q.likelyPromptTokens).toBe(text + 40 * 258);
    expect(q.worstCaseCredits).toBe(creditCost(CATALOG['svc-smart'], text + 40 * 5_805, 1));
    expect(promptTokensFor(q, 'gemini', 'gemini-3-pro')).toBe(text + 40 * 560);
    expect(promptTokensFor(q, 'openai-compatible', 'gpt-4o')).toBe(text + 40 * (1_000 + 765));
    expect(promptTokensFor(q, 'elsewhere', 'x')).toBe(q.promptTokens);
  });

  it('lets a document of tens of pages through on an Anthropic-only route', async () => {
    // Claude 4.5 (the 1,568 px rules): 1,500 text + 1,599 page-image tokens a page are likely, 3,000 +
    // 1,599 held. 30 pages: about 93k likely (within 128k), about 138k held (beyond it, and held all the same).
    const pdf: ContentPart = { type: 'file', file: { file_data: `data:application/pdf;base64,${pdfBase64(30)}` } };
    const q = await quoteRequest(route('svc-smart', [target('anthropic', 'claude-sonnet-4-5')]), req([pdf], 1000));
    const text = estimateTextPromptTokens(req([pdf], 1000).messages);
    expect(q.likelyPromptTokens).toBe(text + 30 * (1_500 + 1_599));
    expect(q.promptTokens).toBe(text + 30 * (3_000 + 1_599));
    expect(q.likelyPromptTokens).toBeLessThan(CATALOG['svc-smart'].contextWindow);
    expect(q.promptTokens).toBeGreaterThan(CATALOG['svc-smart'].contextWindow);
  });

  it('refuses a video URL with a 400 naming the part, unless the operator bounds it', async () => {
    const video: ContentPart = { type: 'image_url', image_url: { url: 'https://cdn.example.com/clip.mp4' } };
    const request = req([{ type: 'text', text: 'What happens?' }, video], 10);
    const refusal = await quoteRequest(route('svc-fast'), request).then(
      () => null,
      (e: unknown) => e,
    );
    expect(refusal).toBeInstanceOf(GatewayError);
    expect((refusal as GatewayError).toEnvelope()).toMatchObject({
      error: { type: 'invalid_request_error', code: 'unbounded_media_url', param: 'messages[0].content[1].image_url.url' },
    });
    const bounded = await quoteRequest(route('svc-fast'), request, { mediaUrlMaxTokens: 50_000 });
    expect(bounded.promptTokens).toBe(estimateTextPromptTokens(request.messages) + 50_000);
  });

  it('bounds an image URL for OpenAI and Anthropic targets; a Gemini target, which cannot, is left out of the route', async () => {
    const image: ContentPart = { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg', detail: 'high' } };
    const request = req([image], 10);
    const text = estimateTextPromptTokens(request.messages);
    const openai = await quoteRequest(route('svc-fast', [target('openai-compatible', 'gpt-4o')]), request);
    expect(openai.promptTokens).toBe(text + 85 + 8 * 170);
    const claude = await quoteRequest(route('svc-fast', [target('anthropic', 'claude-3-5-sonnet-latest')]), request);
    expect(claude.promptTokens).toBe(text + 1600);
    const low = await quoteRequest(route('svc-fast', [target('openai-compatible', 'gpt-4o')]), req([{ ...image, image_url: { url: image.image_url.url, detail: 'low' } }], 10));
    expect(low.promptTokens).toBe(text + 85);
    // Gemini first, OpenAI second (the shipped svc-fast): the request goes to OpenAI, at OpenAI's hold.
    const mixed = await quoteRequest(route('svc-fast', [target('gemini', 'gemini-2.5-flash'), target('openai-compatible', 'gpt-4o')]), request);
    expect(mixed.unservableTargets).toEqual(['gemini/gemini-2.5-flash']);
    expect(mixed.promptTokens).toBe(openai.promptTokens);
    expect(openai.unservableTargets).toEqual([]);
    // Only Gemini: nobody can bound it.
    await expect(quoteRequest(route('svc-fast', [target('gemini', 'gemini-2.5-flash')]), request)).rejects.toMatchObject({
      status: 400,
      code: 'unbounded_media_url',
    });
  });

  it('refuses a file stored at OpenAI (file_id) for an OpenAI target, and ignores it for Anthropic, which refuses it itself', async () => {
    const stored: ContentPart = { type: 'file', file: { file_id: 'file-abc' } };
    await expect(quoteRequest(route('svc-fast', [target('openai-compatible', 'gpt-4o')]), req([stored], 10))).rejects.toMatchObject({
      param: 'messages[0].content[0].file.file_id',
    });
    const claude = await quoteRequest(route('svc-fast', [target('anthropic', 'claude-opus-4-7')]), req([stored], 10));
    expect(claude.promptTokens).toBe(estimateTextPromptTokens(req([stored], 10).messages));
  });
});
