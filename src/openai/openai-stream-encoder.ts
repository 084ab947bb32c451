/**
 * What the OpenAI-convention streams (the chat and legacy-completions doors) share: how they end. The event
 * with the finish reason carries `svc`; with `include_usage` the usage event follows, last, and carries it
 * instead; an answer that did not finish ends with an error event, which carries `svc` when no event above
 * did; then `data: [DONE]`. Each door says only how its events look.
 */
import type { Settlement } from '../completions/completion.js';
import type { Finishing, StreamEncoder, StreamFailure } from '../completions/stream-encoder.js';
import type { UpstreamMeta } from '../providers/contract.js';
import { SSE_DONE, sseJson } from '../streaming/sse-encode.js';
import type { ChoiceLogprobs, ChunkDelta, SvcMetadata } from './chat-types.js';

/** `data: {"error": {...}}`, with `svc` when no earlier event of the stream carried it. */
function streamErrorEvent(failure: StreamFailure, svc: SvcMetadata | undefined): string {
  return sseJson({ error: { message: failure.message, type: 'server_error', param: null, code: failure.code }, ...(svc !== undefined ? { svc } : {}) });
}

export abstract class OpenAIStreamEncoder implements StreamEncoder {
  constructor(protected readonly withUsage: boolean) {}

  abstract opening(): string;
  abstract delta(delta: ChunkDelta, logprobs: ChoiceLogprobs | undefined, meta: UpstreamMeta): string;
  /** The event with the finish reason (`svc` set when it carries it). */
  protected abstract finishEvent(last: Finishing, svc: SvcMetadata | undefined, meta: UpstreamMeta): string;
  /** The usage event of `include_usage`, with `svc`. */
  protected abstract usageEvent(s: Settlement, svc: SvcMetadata): string;

  closing(finishing: Finishing | null, s: Settlement, svc: SvcMetadata, failure: StreamFailure | null, meta: UpstreamMeta): string {
    let out = '';
    const usage = this.withUsage && s.ending === 'completed';
    // An answer that ended without a finish reason from its upstream finished all the same: `stop`, as the
    // non-streaming answer says.
    const last = finishing ?? (s.ending === 'completed' ? { delta: {}, finish: 'stop' as const } : null);
    if (last !== null) out += this.finishEvent(last, usage ? undefined : svc, meta);
    if (usage) out += this.usageEvent(s, svc);
    if (failure !== null) out += streamErrorEvent(failure, last === null ? svc : undefined);
    return out;
  }

  internalError(failure: StreamFailure): string {
    return streamErrorEvent(failure, undefined);
  }

  done(): string {
    return SSE_DONE;
  }
}
