/**
 * The chat-completions stream (`chat.completion.chunk` events, then `data: [DONE]`), as OpenAI frames it:
 * a role chunk first; each delta one chunk; the chunk with the finish reason carries `svc` (held back until
 * the hold settled); with `stream_options.include_usage` the usage chunk follows, last, and carries `svc`
 * instead, and every earlier chunk says `usage: null`. A stream that did not finish ends with an error event
 * that carries `svc`. docs/api.md, "Streaming answer".
 */
import type { Settlement } from '../completions/completion.js';
import type { Finishing } from '../completions/stream-encoder.js';
import { tokenUsage } from '../completions/token-usage.js';
import type { UpstreamMeta } from '../providers/contract.js';
import { sseJson } from '../streaming/sse-encode.js';
import { OpenAIStreamEncoder } from './openai-stream-encoder.js';
import type { ChatCompletionChunk, ChoiceLogprobs, ChunkDelta, FinishReason, SvcMetadata } from './chat-types.js';

type ChunkHead = Pick<ChatCompletionChunk, 'id' | 'object' | 'created' | 'model' | 'system_fingerprint' | 'service_tier'>;

export class ChatStreamEncoder extends OpenAIStreamEncoder {
  /** What the serving upstream said of itself (system_fingerprint, service_tier): on every chunk from then on, as OpenAI does. */
  private meta: UpstreamMeta = {};
  /**
   * `data: {` and the chunk's head fields up to `"choices":[`, the same on every chunk while `meta` is the
   * same object (the stream replaces it only when the upstream says something new): serialized once, not
   * once a delta. The rest of a chunk is its choice, serialized alone, and a fixed tail.
   */
  private prefix = '';
  private prefixMeta: UpstreamMeta | null = null;

  constructor(
    private readonly id: string,
    private readonly created: number,
    private readonly model: string,
    withUsage: boolean,
  ) {
    super(withUsage);
  }

  opening(): string {
    return this.chunk({ role: 'assistant', content: '' }, null);
  }

  delta(delta: ChunkDelta, logprobs: ChoiceLogprobs | undefined, meta: UpstreamMeta): string {
    this.meta = meta;
    return this.chunk(delta, null, logprobs);
  }

  protected finishEvent(last: Finishing, svc: SvcMetadata | undefined, meta: UpstreamMeta): string {
    this.meta = meta;
    return this.chunk(last.delta, last.finish, last.logprobs, svc);
  }

  protected usageEvent(s: Settlement, svc: SvcMetadata): string {
    return sseJson({ ...this.head(), choices: [], usage: tokenUsage(s), svc } satisfies ChatCompletionChunk);
  }

  private head(): ChunkHead {
    const h: ChunkHead = { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model };
    if (this.meta.serviceTier !== undefined) h.service_tier = this.meta.serviceTier;
    if (this.meta.systemFingerprint !== undefined) h.system_fingerprint = this.meta.systemFingerprint;
    return h;
  }

  /**
   * The frame of `{ ...head, choices: [choice], usage?: null, svc? }`, character for character what
   * JSON.stringify of that object writes (the head's JSON without its closing brace, then the rest).
   */
  private chunk(delta: ChunkDelta, finish: FinishReason | null, logprobs?: ChoiceLogprobs, svc?: SvcMetadata): string {
    if (this.prefixMeta !== this.meta) {
      const head = JSON.stringify(this.head());
      this.prefix = 'data: ' + head.slice(0, -1) + ',"choices":[';
      this.prefixMeta = this.meta;
    }
    const choice: ChatCompletionChunk['choices'][number] = { index: 0, delta, finish_reason: finish };
    if (logprobs !== undefined) choice.logprobs = logprobs;
    const usage = this.withUsage ? '],"usage":null' : ']';
    return this.prefix + JSON.stringify(choice) + usage + (svc !== undefined ? ',"svc":' + JSON.stringify(svc) : '') + '}\n\n';
  }
}
