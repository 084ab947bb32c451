import { describe, expect, it } from 'vitest';
import { creditCost } from '../../src/billing/pricing.js';
import { quoteRequest } from '../../src/billing/quote.js';
import { estimatePromptTokens, estimateTextTokens } from '../../src/billing/token-estimate.js';
import type { ChatRequest } from '../../src/openai/chat-types.js';
import { GatewayError } from '../../src/openai/errors.js';
import { CATALOG } from '../../src/routing/catalog.js';

const req = (content: string, max_tokens: number | null): ChatRequest => ({
  model: 'svc-fast',
  messages: [{ role: 'user', content }],
  temperature: 0.7,
  top_p: 1,
  max_tokens,
  stream: false,
  include_usage: false,
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
  it('adds framing per message and a budget per image', () => {
    const text = estimatePromptTokens([{ role: 'user', content: 'abcdef' }]);
    expect(text).toBe(3 + 4 + 2);
    const image = estimatePromptTokens([
      { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] },
    ]);
    expect(image).toBe(3 + 4 + 765);
  });
});

describe('quote', () => {
  it('holds prompt plus the client bound', () => {
    const q = quoteRequest(CATALOG['svc-fast'], 2048, req('hello there', 100));
    expect(q.maxOutputTokens).toBe(100);
    expect(q.worstCaseCredits).toBe(creditCost(CATALOG['svc-fast'], q.promptTokens, 100));
  });
  it('uses the alias default bound when none is given, within the window', () => {
    expect(quoteRequest(CATALOG['svc-fast'], 2048, req('hi', null)).maxOutputTokens).toBe(2048);
    const long = 'x'.repeat(3 * 63_000);
    const q = quoteRequest(CATALOG['svc-fast'], 2048, req(long, null));
    expect(q.promptTokens + q.maxOutputTokens).toBe(64_000);
  });
  it('refuses what cannot fit the context window', () => {
    const tooLong = () => quoteRequest(CATALOG['svc-fast'], 2048, req('x'.repeat(3 * 64_000), null));
    expect(tooLong).toThrowError(GatewayError);
    expect(() => quoteRequest(CATALOG['svc-fast'], 2048, req('hi', 64_000))).toThrowError(/Lower max_tokens/);
  });
});
