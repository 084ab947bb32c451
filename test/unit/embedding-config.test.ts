/**
 * The `embeddings:` section of the config (src/config/schema.ts): none by default; an alias that takes a chat
 * alias's name, one that targets an Anthropic provider (no embeddings API) and one that targets a provider
 * the config does not define are each refused by parseConfig, with a message naming the field.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, DEFAULT_CONFIG, parseConfig } from '../../src/config/schema.js';

const base = {
  providers: {
    sandbox: { type: 'sandbox' },
    openai: { type: 'openai-compatible', base_url: 'https://api.openai.com/v1' },
    claude: { type: 'anthropic' },
    gemini: { type: 'gemini' },
  },
  aliases: {
    'svc-fast': { targets: [{ provider: 'sandbox', model: 'sandbox-fast' }] },
    'svc-code': { targets: [{ provider: 'sandbox', model: 'sandbox-code' }] },
    'svc-smart': { targets: [{ provider: 'sandbox', model: 'sandbox-smart' }] },
  },
};

const withEmbeddings = (embeddings: unknown): unknown => ({ ...base, embeddings });

function refusal(value: unknown): string {
  try {
    parseConfig(value);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error('parseConfig accepted the config');
}

describe('embeddings config', () => {
  it('is empty by default', () => {
    expect(parseConfig(DEFAULT_CONFIG).embeddings).toEqual({});
  });

  it('takes an alias with OpenAI-compatible, Gemini and sandbox targets', () => {
    const cfg = parseConfig(
      withEmbeddings({
        'svc-embed': {
          credits_per_1k_tokens: 2,
          targets: [
            { provider: 'openai', model: 'text-embedding-3-small' },
            { provider: 'gemini', model: 'text-embedding-004' },
            { provider: 'sandbox', model: 'sandbox-embed' },
          ],
        },
      }),
    );
    expect(cfg.embeddings['svc-embed']?.targets.map((t) => t.provider)).toEqual(['openai', 'gemini', 'sandbox']);
  });

  it.each(['svc-fast', 'svc-code', 'svc-smart', 'svc-auto'])('refuses an embedding alias named %s, like a chat alias', (alias) => {
    const message = refusal(withEmbeddings({ [alias]: { credits_per_1k_tokens: 2, targets: [{ provider: 'openai', model: 'text-embedding-3-small' }] } }));
    expect(message).toContain(`embeddings.${alias}:`);
    expect(message).toMatch(/chat alias/);
  });

  it('refuses a target on an Anthropic provider, naming the target', () => {
    const message = refusal(
      withEmbeddings({
        'svc-embed': {
          credits_per_1k_tokens: 2,
          targets: [
            { provider: 'openai', model: 'text-embedding-3-small' },
            { provider: 'claude', model: 'claude-embed' },
          ],
        },
      }),
    );
    expect(message).toContain('embeddings.svc-embed.targets[1].provider:');
    expect(message).toMatch(/Anthropic/);
    expect(message).toContain("'claude'");
  });

  it('refuses a target on a provider the config does not define, naming the target', () => {
    const message = refusal(withEmbeddings({ 'svc-embed': { credits_per_1k_tokens: 2, targets: [{ provider: 'voyage', model: 'voyage-3' }] } }));
    expect(message).toContain('embeddings.svc-embed.targets[0].provider:');
    expect(message).toMatch(/unknown provider 'voyage'/);
  });

  it.each([
    ['a zero price', { credits_per_1k_tokens: 0, targets: [{ provider: 'openai', model: 'm' }] }, 'embeddings.svc-embed.credits_per_1k_tokens:'],
    ['no targets', { credits_per_1k_tokens: 1, targets: [] }, 'embeddings.svc-embed.targets:'],
    ['an unknown field', { credits_per_1k_tokens: 1, targets: [{ provider: 'openai', model: 'm' }], dims: 3 }, 'embeddings.svc-embed:'],
  ])('refuses %s, naming the field', (_what, spec, field) => {
    expect(refusal(withEmbeddings({ 'svc-embed': spec }))).toContain(field);
  });

  it("refuses an alias not named 'svc-...'", () => {
    expect(refusal(withEmbeddings({ 'text-embed': { credits_per_1k_tokens: 1, targets: [{ provider: 'openai', model: 'm' }] } }))).toMatch(/embeddings\.text-embed/);
  });
});
