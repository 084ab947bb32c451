/**
 * The legacy completions stream, as OpenAI frames it: `text_completion` events, one per piece of text (no
 * opening role event), the last with the finish reason, then `data: [DONE]`. As on the chat door, the event
 * with the finish reason carries `svc` (or, with `stream_options.include_usage`, the usage event that follows
 * it, last); a stream that did not finish ends with an error event that carries `svc`.
 */
import type { Settlement } from '../completions/completion.js';
import type { Finishing } from '../completions/stream-encoder.js';
import { tokenUsage } from '../completions/token-usage.js';
import type { UpstreamMeta } from '../providers/contract.js';
import { sseJson } from '../streaming/sse-encode.js';
import { OpenAIStreamEncoder } from './openai-stream-encoder.js';
import type { ChoiceLogprobs, ChunkDelta, FinishReason, SvcMetadata } from './chat-types.js';
import { legacyLogprobs, type TextCompletion } from './legacy-completions.js';

export class LegacyStreamEncoder extends OpenAIStreamEncoder {
  /** Characters of text sent so far: where the next logprobs' text_offset starts. */
  private offset = 0;

  constructor(
    private readonly id: string,
    private readonly created: number,
    private readonly model: string,
    withUsage: boolean,
  ) {
    super(withUsage);
  }

  opening(): string {
    return '';
  }

  delta(delta: ChunkDelta, logprobs: ChoiceLogprobs | undefined, meta: UpstreamMeta): string {
    // Only text belongs to this door: reasoning, refusals and tool calls have no place in its shape.
    if (!delta.content && logprobs === undefined) return '';
    return this.event(delta.content ?? '', null, logprobs, meta);
  }

  protected finishEvent(last: Finishing, svc: SvcMetadata | undefined, meta: UpstreamMeta): string {
    return this.event(last.delta.content ?? '', last.finish, last.logprobs, meta, svc);
  }

  protected usageEvent(s: Settlement, svc: SvcMetadata): string {
    return sseJson({ id: this.id, object: 'text_completion', created: this.created, model: this.model, choices: [], usage: tokenUsage(s), svc } satisfies TextCompletion);
  }

  private event(text: string, finish: FinishReason | null, logprobs: ChoiceLogprobs | undefined, meta: UpstreamMeta, svc?: SvcMetadata): string {
    const e: TextCompletion = {
      id: this.id,
      object: 'text_completion',
      created: this.created,
      model: this.model,
      choices: [{ text, index: 0, logprobs: legacyLogprobs(logprobs, this.offset), finish_reason: finish }],
    };
    this.offset += text.length;
    if (meta.systemFingerprint !== undefined) e.system_fingerprint = meta.systemFingerprint;
    if (this.withUsage) e.usage = null;
    if (svc !== undefined) e.svc = svc;
    return sseJson(e);
  }
}
