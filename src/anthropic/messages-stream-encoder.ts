/**
 * The Anthropic Messages door's stream, Anthropic's event sequence: `message_start`; per content block
 * `content_block_start`, its deltas (`text_delta`, `thinking_delta`, `input_json_delta`) and
 * `content_block_stop`; `message_delta` (stop reason and usage, and our `svc`); `message_stop`. No `[DONE]`.
 * A stream that could not finish ends with `event: error` in Anthropic's envelope, carrying `svc`.
 * Internal deltas arrive as chat deltas: a change of kind (reasoning, text, a tool call's index) closes the
 * open block and opens the next, as Anthropic's blocks never interleave.
 */
import type { Settlement } from '../completions/completion.js';
import type { Finishing, StreamEncoder, StreamFailure } from '../completions/stream-encoder.js';
import { tokenUsage } from '../completions/token-usage.js';
import type { ChoiceLogprobs, ChunkDelta, SvcMetadata } from '../openai/chat-types.js';
import type { UpstreamMeta } from '../providers/contract.js';
import { sseEvent } from '../streaming/sse-encode.js';
import { anthropicUsage, stopReasonOf } from './messages-response.js';

type OpenBlock = { kind: 'text' } | { kind: 'thinking' } | { kind: 'tool'; index: number };

export class MessagesStreamEncoder implements StreamEncoder {
  private index = -1;
  private open: OpenBlock | null = null;

  constructor(
    private readonly id: string,
    private readonly model: string,
    /** The quote's prompt estimate: the real count is known only at the end (message_delta carries it). */
    private readonly inputEstimate: number,
  ) {}

  opening(): string {
    return sseEvent('message_start', {
      type: 'message_start',
      message: {
        id: this.id,
        type: 'message',
        role: 'assistant',
        model: this.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: this.inputEstimate, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
      },
    });
  }

  delta(delta: ChunkDelta, _logprobs: ChoiceLogprobs | undefined, _meta: UpstreamMeta): string {
    const out: string[] = [];
    if (delta.reasoning_content) {
      this.ensure({ kind: 'thinking' }, out);
      out.push(this.blockDelta({ type: 'thinking_delta', thinking: delta.reasoning_content }));
    }
    const text = (delta.content ?? '') + (delta.refusal ?? '');
    if (text.length > 0) {
      this.ensure({ kind: 'text' }, out);
      out.push(this.blockDelta({ type: 'text_delta', text }));
    }
    for (const piece of delta.tool_calls ?? []) {
      this.ensure({ kind: 'tool', index: piece.index }, out, { id: piece.id ?? `toolu_${this.id}_${piece.index}`, name: piece.function?.name ?? '' });
      if (piece.function?.arguments) out.push(this.blockDelta({ type: 'input_json_delta', partial_json: piece.function.arguments }));
    }
    return out.join('');
  }

  closing(finishing: Finishing | null, s: Settlement, svc: SvcMetadata, failure: StreamFailure | null): string {
    const out: string[] = [];
    if (finishing !== null) out.push(this.delta(finishing.delta, undefined, {}));
    this.close(out);
    if (failure !== null) {
      const type = failure.code === 'gateway_shutting_down' ? 'overloaded_error' : 'api_error';
      out.push(sseEvent('error', { type: 'error', error: { type, message: failure.message }, svc }));
      return out.join('');
    }
    out.push(
      sseEvent('message_delta', {
        type: 'message_delta',
        delta:
          finishing?.stopSequence !== undefined
            ? { stop_reason: 'stop_sequence', stop_sequence: finishing.stopSequence }
            : { stop_reason: stopReasonOf(finishing?.finish ?? 'stop'), stop_sequence: null },
        usage: anthropicUsage(tokenUsage(s)),
        svc,
      }),
      sseEvent('message_stop', { type: 'message_stop' }),
    );
    return out.join('');
  }

  internalError(failure: StreamFailure): string {
    return sseEvent('error', { type: 'error', error: { type: 'api_error', message: failure.message } });
  }

  done(): null {
    return null;
  }

  /** Opens `block` unless it is the one open, closing the open one first. */
  private ensure(block: OpenBlock, out: string[], tool?: { id: string; name: string }): void {
    const o = this.open;
    if (o !== null && o.kind === block.kind && (o.kind !== 'tool' || (block.kind === 'tool' && o.index === block.index))) return;
    this.close(out);
    this.index += 1;
    this.open = block;
    const content =
      block.kind === 'text'
        ? { type: 'text', text: '' }
        : block.kind === 'thinking'
          ? { type: 'thinking', thinking: '', signature: '' }
          : { type: 'tool_use', id: tool?.id ?? '', name: tool?.name ?? '', input: {} };
    out.push(sseEvent('content_block_start', { type: 'content_block_start', index: this.index, content_block: content }));
  }

  private close(out: string[]): void {
    if (this.open === null) return;
    out.push(sseEvent('content_block_stop', { type: 'content_block_stop', index: this.index }));
    this.open = null;
  }

  private blockDelta(delta: object): string {
    return sseEvent('content_block_delta', { type: 'content_block_delta', index: this.index, delta });
  }
}
