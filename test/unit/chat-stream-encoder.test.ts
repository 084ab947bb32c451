import { describe, expect, it } from 'vitest';
import type { Settlement } from '../../src/completions/completion.js';
import { ChatStreamEncoder } from '../../src/openai/chat-stream-encoder.js';
import type { ChunkDelta, SvcMetadata } from '../../src/openai/chat-types.js';
import type { UpstreamMeta } from '../../src/providers/contract.js';

const svc: SvcMetadata = {
  requested_model: 'svc-fast',
  routed_model: 'up/m',
  routed_provider: 'up',
  credits_used: 7,
  balance_remaining: 93,
  tokens_metered: { prompt: 3, completion: 4, total: 7 },
  latency_ms: 12,
};

const settlement = { ending: 'completed', promptTokens: 3, completionTokens: 4, cachedTokens: 0, reasoningTokens: 0, latencyMs: 12 } as unknown as Settlement;

/** What each chunk must be: JSON.stringify of the chunk object, as OpenAI's field order has it. */
function expected(delta: ChunkDelta, finish: string | null, meta: UpstreamMeta, withUsage: boolean, extra: { logprobs?: unknown; svc?: SvcMetadata } = {}): string {
  const chunk: Record<string, unknown> = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1700000000, model: 'svc-fast' };
  if (meta.serviceTier !== undefined) chunk.service_tier = meta.serviceTier;
  if (meta.systemFingerprint !== undefined) chunk.system_fingerprint = meta.systemFingerprint;
  const choice: Record<string, unknown> = { index: 0, delta, finish_reason: finish };
  if (extra.logprobs !== undefined) choice.logprobs = extra.logprobs;
  chunk.choices = [choice];
  if (withUsage) chunk.usage = null;
  if (extra.svc !== undefined) chunk.svc = extra.svc;
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

describe('chat stream encoder', () => {
  for (const withUsage of [false, true]) {
    it(`writes each chunk as JSON.stringify of its object would, as the upstream's meta changes (include_usage ${withUsage})`, () => {
      const encoder = new ChatStreamEncoder('chatcmpl-1', 1700000000, 'svc-fast', withUsage);
      expect(encoder.opening()).toBe(expected({ role: 'assistant', content: '' }, null, {}, withUsage));
      const none: UpstreamMeta = {};
      expect(encoder.delta({ content: 'He said "hi"\n' }, undefined, none)).toBe(expected({ content: 'He said "hi"\n' }, null, none, withUsage));
      const fingerprint: UpstreamMeta = { systemFingerprint: 'fp_1' };
      const logprobs = { content: [{ token: 'a', logprob: -0.5, bytes: [97], top_logprobs: [] }], refusal: null };
      expect(encoder.delta({ content: 'a' }, logprobs, fingerprint)).toBe(expected({ content: 'a' }, null, fingerprint, withUsage, { logprobs }));
      const both: UpstreamMeta = { systemFingerprint: 'fp_2', serviceTier: 'default' };
      const tool: ChunkDelta = { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"x":' } }] };
      expect(encoder.delta(tool, undefined, both)).toBe(expected(tool, null, both, withUsage));
      // The same meta object again, then back to none: the head follows the meta each chunk is given.
      expect(encoder.delta({ content: 'é👋' }, undefined, both)).toBe(expected({ content: 'é👋' }, null, both, withUsage));
      expect(encoder.delta({ content: 'z' }, undefined, none)).toBe(expected({ content: 'z' }, null, none, withUsage));
      const closing = encoder.closing({ delta: { content: '.' }, finish: 'stop' }, settlement, svc, null, both);
      const finish = expected({ content: '.' }, 'stop', both, withUsage, withUsage ? {} : { svc });
      expect(closing.startsWith(finish)).toBe(true);
      if (!withUsage) expect(closing).toBe(finish);
      else expect(JSON.parse(closing.slice(finish.length + 'data: '.length))).toMatchObject({ choices: [], usage: { total_tokens: 7 }, svc });
      expect(encoder.done()).toBe('data: [DONE]\n\n');
    });
  }
});
