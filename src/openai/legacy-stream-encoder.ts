/**
 * The legacy completions stream, as OpenAI frames it: `text_completion` events, one per piece of text (no
 * opening role event), the last with the finish reason, then `data: [DONE]`. As on the chat door, the event
 * with the finish reason carries `svc` (or, with `stream_options.include_usage`, the usage event that follows
 * it, last); a stream that did not finish ends with an error event that carries `svc`.
 */
import type { Settlement } from '../completions/completion.js';
import type { Finishing, StreamEncoder, StreamFailure } from '../completions/stream-encoder.js';
import { tokenUsage } from '../completions/token-usage.js';
import type { UpstreamMeta } from '../providers/contract.js';
import { encodeSseDone, encodeSseJson } from '../streaming/sse-encode.js';
import { closingFrames, streamErrorEvent } from './stream-closing.js';
import type { ChoiceLogprobs, ChunkDelta, FinishReason, SvcMetadata } from './chat-types.js';
import { legacyLogprobs, type TextCompletion } from './legacy-completions.js';

export class LegacyStreamEncoder implements StreamEncoder {
  /** Characters of text sent so far: where the next logprobs' text_offset starts. */
  private offset = 0;

  constructor(
    private readonly id: string,
    private readonly created: number,
    private readonly model: string,
    private readonly withUsage: boolean,
  ) {}

  opening(): Uint8Array[] {
    return [];
  }

  delta(delta: ChunkDelta, logprobs: ChoiceLogprobs | undefined, meta: UpstreamMeta): Uint8Array[] {
    // Only text belongs to this door: reasoning, refusals and tool calls have no place in its shape.
    if (!delta.content && logprobs === undefined) return [];
    return [this.event(delta.content ?? '', null, logprobs, meta)];
  }

  closing(finishing: Finishing | null, s: Settlement, svc: SvcMetadata, failure: StreamFailure | null, meta: UpstreamMeta): Uint8Array[] {
    return closingFrames(
      {
        finishEvent: (last, withSvc) => this.event(last.delta.content ?? '', last.finish, last.logprobs, meta, withSvc),
        usageEvent: (settled, withSvc) =>
          encodeSseJson({ id: this.id, object: 'text_completion', created: this.created, model: this.model, choices: [], usage: tokenUsage(settled), svc: withSvc } satisfies TextCompletion),
      },
      this.withUsage,
      finishing,
      s,
      svc,
      failure,
    );
  }

  internalError(failure: StreamFailure): Uint8Array[] {
    return [streamErrorEvent(failure, undefined)];
  }

  done(): Uint8Array {
    return encodeSseDone();
  }

  private event(text: string, finish: FinishReason | null, logprobs: ChoiceLogprobs | undefined, meta: UpstreamMeta, svc?: SvcMetadata): Uint8Array {
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
    return encodeSseJson(e);
  }
}
