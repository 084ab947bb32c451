/**
 * Holds that cover attachments, through the real gateway (HTTP, SQLite, the sandbox upstream): a PDF with
 * max_tokens 1 holds what its pages may cost, to the credit (one credit less is a 402, exactly enough is
 * a 200); the hold grows with the document; a video URL is refused with a 400 unless the operator bounds
 * such parts, and then that bound is held.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { creditCost } from '../../src/billing/pricing.js';
import { estimateTextPromptTokens } from '../../src/billing/token-estimate.js';
import type { ChatMessage } from '../../src/openai/chat-types.js';
import { CATALOG } from '../../src/routing/catalog.js';
import { chat, instantSandboxConfig, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { b64, pdf } from '../unit/media-builders.js';

/**
 * The sandbox is held like an OpenAI-compatible server of unknown model (docs/attachments.md): a PDF page
 * is up to 1,000 text tokens plus the page image (1275 x 1650) at the larger of the tile rule (765) and
 * the patch rule (34 x 44 = 1,496 patches).
 */
const HELD_PER_PAGE = 1_000 + 1_496;

const pdfMessages = (pages: number): ChatMessage[] => [
  {
    role: 'user',
    content: [
      { type: 'text', text: 'Summarize this report in one word.' },
      { type: 'file', file: { filename: 'report.pdf', file_data: `data:application/pdf;base64,${b64(pdf(pages, { objectStreams: true }))}` } },
    ],
  },
];

function expectedHold(pages: number): number {
  return creditCost(CATALOG['svc-fast'], estimateTextPromptTokens(pdfMessages(pages)) + pages * HELD_PER_PAGE, 1);
}

async function errorOf(res: Response): Promise<{ message: string; type: string; param: string | null; code: string }> {
  return ((await res.json()) as { error: { message: string; type: string; param: string | null; code: string } }).error;
}

describe('attachments through the gateway', () => {
  let gw: TestGateway;
  let bounded: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway();
    bounded = await startTestGateway({ config: { ...instantSandboxConfig(), limits: { ...instantSandboxConfig().limits, media_url_max_tokens: 20_000 } } });
  });
  afterAll(async () => {
    await gw?.close();
    await bounded?.close();
  });

  it('a 30-page PDF with max_tokens 1 holds its pages: one credit short is a 402, exactly enough is a 200', async () => {
    const hold = expectedHold(30);
    // The flat guess this replaces held 1,000 tokens for any file: 5 credits here.
    expect(hold).toBeGreaterThan(290);
    const body = { model: 'svc-fast', messages: pdfMessages(30), max_tokens: 1 };

    const short = await gw.seed({ purchased: hold - 1 });
    const refused = await chat(gw, short.secret, body);
    expect(refused.status).toBe(402);
    const err = await errorOf(refused);
    expect(err.code).toBe('insufficient_credits');
    expect(err.message).toContain(`${hold} credits`);
    expect(await gw.store.ledger.balance(short.accountId, 'live')).toMatchObject({ purchased: hold - 1, reserved: 0 });

    const enough = await gw.seed({ purchased: hold });
    const ok = await chat(gw, enough.secret, body);
    expect(ok.status).toBe(200);
    const answer = (await ok.json()) as { svc: { credits_used: number } };
    expect(answer.svc.credits_used).toBeGreaterThan(0);
    expect(answer.svc.credits_used).toBeLessThanOrEqual(hold);
    const after = await gw.store.ledger.balance(enough.accountId, 'live');
    expect(after.reserved).toBe(0);
    expect(after.purchased).toBe(hold - answer.svc.credits_used);
  });

  it('the hold follows the document: three times the pages, about three times the credits', async () => {
    const small = await gw.seed({ purchased: expectedHold(10) - 1 });
    const res = await chat(gw, small.secret, { model: 'svc-fast', messages: pdfMessages(10), max_tokens: 1 });
    expect(res.status).toBe(402);
    expect((await errorOf(res)).message).toContain(`${expectedHold(10)} credits`);
    expect(expectedHold(30) / expectedHold(10)).toBeGreaterThan(2.9);
  });

  it('a document beyond the context window is refused before any hold', async () => {
    const seeded = await gw.seed({ purchased: 1_000_000 });
    const res = await chat(gw, seeded.secret, { model: 'svc-fast', messages: pdfMessages(40), max_tokens: 1 });
    expect(res.status).toBe(400);
    expect(await errorOf(res)).toMatchObject({ code: 'context_length_exceeded', param: 'messages' });
  });

  const videoBody = {
    model: 'svc-fast',
    max_tokens: 5,
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What happens in this clip?' },
          { type: 'image_url', image_url: { url: 'https://media.example.com/clips/launch.mp4' } },
        ],
      },
    ],
  };

  it('a video URL is refused with a 400 that names the part, and nothing is held', async () => {
    const seeded = await gw.seed({ purchased: 10_000 });
    const res = await chat(gw, seeded.secret, videoBody);
    expect(res.status).toBe(400);
    const err = await errorOf(res);
    expect(err).toMatchObject({ type: 'invalid_request_error', code: 'unbounded_media_url', param: 'messages[0].content[1].image_url.url' });
    expect(err.message).toContain('limits.media_url_max_tokens');
    expect(await gw.store.ledger.balance(seeded.accountId, 'live')).toMatchObject({ purchased: 10_000, reserved: 0 });
  });

  it('with limits.media_url_max_tokens, the video URL is served and its bound is held', async () => {
    const messages = videoBody.messages as ChatMessage[];
    const hold = creditCost(CATALOG['svc-fast'], estimateTextPromptTokens(messages) + 20_000, 5);
    const short = await bounded.seed({ purchased: hold - 1 });
    const refused = await chat(bounded, short.secret, videoBody);
    expect(refused.status).toBe(402);
    expect((await errorOf(refused)).message).toContain(`${hold} credits`);
    const enough = await bounded.seed({ purchased: hold });
    const ok = await chat(bounded, enough.secret, videoBody);
    expect(ok.status).toBe(200);
    expect((await bounded.store.ledger.balance(enough.accountId, 'live')).reserved).toBe(0);
  });

  it('an image URL is served without any setting: OpenAI-style targets bound it', async () => {
    const seeded = await gw.seed({ purchased: 10_000 });
    const res = await chat(gw, seeded.secret, {
      model: 'svc-fast',
      max_tokens: 5,
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/photo.jpg' } }] }],
    });
    expect(res.status).toBe(200);
  });

  it('an image URL skips a Gemini target, which cannot bound it, and is served by the next one', async () => {
    const config = instantSandboxConfig();
    const mixed = await startTestGateway({
      config: {
        ...config,
        // A Gemini target that nothing listens for: trying it would show as a failed attempt.
        providers: { ...config.providers, gemini: { type: 'gemini', base_url: 'http://127.0.0.1:9/v1beta', paid: false, upstream_streaming: true } },
        aliases: { ...config.aliases, 'svc-fast': { targets: [{ provider: 'gemini', model: 'gemini-2.5-flash' }, ...config.aliases['svc-fast'].targets] } },
      },
    });
    try {
      const seeded = await mixed.seed({ purchased: 10_000 });
      const image = { type: 'image_url', image_url: { url: 'https://example.com/photo.jpg' } };
      const res = await chat(mixed, seeded.secret, { model: 'svc-fast', max_tokens: 5, messages: [{ role: 'user', content: [image] }] });
      expect(res.status).toBe(200);
      const svc = ((await res.json()) as { svc: { routed_provider: string; attempts?: unknown[] } }).svc;
      expect(svc.routed_provider).toBe('sandbox');
      expect(svc.attempts).toBeUndefined();
      // Text alone still goes to Gemini first (and fails over from the dead port).
      const text = await chat(mixed, seeded.secret, { model: 'svc-fast', max_tokens: 5, messages: [{ role: 'user', content: 'Hi' }] });
      const textSvc = ((await text.json()) as { svc: { attempts?: { provider: string }[] } }).svc;
      expect(textSvc.attempts?.map((a) => a.provider)).toEqual(['gemini', 'sandbox']);
    } finally {
      await mixed.close();
    }
  });
});
