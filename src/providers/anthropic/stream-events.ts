/**
 * An Anthropic SSE body -> StreamEvents.
 *
 * The stream is `message_start`, content blocks (`content_block_start`, `content_block_delta`...,
 * `content_block_stop`, each with the `index` of its block), `message_delta` (stop reason, cumulative usage),
 * and `message_stop`, with `ping`s anywhere. It ends at `message_stop`: a body that ends before it is a cut.
 * An `error` event (e.g. `overloaded_error`) fails the iteration with the HTTP status its type stands for.
 * Unknown event and block types are skipped, as the API's versioning policy asks of clients.
 */
import { UpstreamError, type StreamEvent } from '../contract.js';
import type { ChunkDelta } from '../../openai/chat-types.js';
import { SseDecodeError, decodeSseBatches } from '../../streaming/sse-decode.js';
import { cancelBodyOnEarlyReturn } from '../early-cancel.js';
import { abortedError, bodyReadFailure, isRecord, protocolError } from '../upstream-failures.js';
import { payloadError } from './errors.js';
import type { PrefillEcho } from './prefill.js';
import { finishReasonOf, tokensOf } from './response-parse.js';
import type { UpstreamBody } from '../upstream-http.js';
import type { StopSignalLike } from '../../core/stop-signal.js';

/**
 * One batch per network read, as the OpenAI-compatible reader (../openai-compatible/event-stream.ts): a
 * fault in the middle of a read ends the iteration after the events before it are yielded.
 * Leaving this generator early, by any path, closes the SSE decoder, which cancels the body.
 */
export async function* readMessageStream(
  body: UpstreamBody,
  signal: StopSignalLike,
  echo: PrefillEcho | null,
): AsyncGenerator<StreamEvent[], void, undefined> {
  const translator = new EventTranslator(echo);
  try {
    for await (const sse of decodeSseBatches(body, { signal })) {
      if (signal.aborted) break;
      const batch: StreamEvent[] = [];
      let fault: unknown = null;
      try {
        for (const { data, event } of sse) {
          if (data.length === 0) continue;
          const payload = parseEvent(data);
          const type = typeof payload.type === 'string' ? payload.type : event;
          if (type === 'error' || event === 'error') throw payloadError(payload);
          for (const ev of translator.accept(type, payload)) batch.push(ev);
          if (translator.stopped) break;
        }
      } catch (e) {
        fault = e;
      }
      if (batch.length > 0) yield batch;
      if (fault !== null) throw fault;
      if (translator.stopped) {
        // The answer is whole at message_stop: the body's end may follow in a later packet, and its
        // connection goes back to the pool rather than being closed (UpstreamBody.release).
        body.release?.();
        return;
      }
    }
  } catch (err) {
    if (err instanceof UpstreamError) throw err;
    if (err instanceof SseDecodeError) throw protocolError(`upstream stream is not valid SSE: ${err.message}`);
    throw bodyReadFailure(err, signal);
  }
  if (signal.aborted) throw abortedError(signal);
  throw protocolError('upstream stream ended early (no message_stop)');
}

function parseEvent(data: string): Record<string, unknown> {
  let payload: unknown;
  try {
    payload = JSON.parse(data);
  } catch {
    throw protocolError(`upstream sent a malformed stream event: ${data.slice(0, 120)}`);
  }
  if (!isRecord(payload)) throw protocolError('upstream stream event is not a JSON object');
  return payload;
}

type Block =
  | { kind: 'text' }
  | { kind: 'tool'; toolIndex: number; startInput: unknown; argumentsSent: boolean }
  | { kind: 'thinking' }
  | { kind: 'other' };

const delta = (d: ChunkDelta): StreamEvent => ({ type: 'delta', delta: d, finishReason: null });

/** The per-stream state: which block each index is, tool-call numbering, stop reason and usage so far. */
class EventTranslator {
  stopped = false;
  private readonly blocks = new Map<number, Block>();
  private toolCalls = 0;
  private stopReason: unknown = null;
  private stopSequence: string | null = null;
  private usage: Record<string, unknown> = {};

  constructor(private readonly echo: PrefillEcho | null) {}

  accept(type: string | undefined, e: Record<string, unknown>): StreamEvent[] {
    switch (type) {
      case 'message_start':
        return this.messageStart(e);
      case 'content_block_start':
        return this.blockStart(e);
      case 'content_block_delta':
        return this.blockDelta(e);
      case 'content_block_stop':
        return this.blockStop(e);
      case 'message_delta':
        if (isRecord(e.delta) && e.delta.stop_reason !== undefined && e.delta.stop_reason !== null) {
          this.stopReason = e.delta.stop_reason;
          if (typeof e.delta.stop_sequence === 'string') this.stopSequence = e.delta.stop_sequence;
        }
        // Counts in message_delta are cumulative: the latest value of each field is the total.
        if (isRecord(e.usage)) this.usage = { ...this.usage, ...withoutNulls(e.usage) };
        return [];
      case 'message_stop':
        return this.messageStop();
      default:
        return [];
    }
  }

  private messageStart(e: Record<string, unknown>): StreamEvent[] {
    const message = isRecord(e.message) ? e.message : {};
    if (isRecord(message.usage)) this.usage = withoutNulls(message.usage);
    // The OpenAI convention opens with the role; the gateway drops it, failover counts it as the first event.
    return [delta({ role: 'assistant', content: '' })];
  }

  private blockStart(e: Record<string, unknown>): StreamEvent[] {
    const index = blockIndex(e);
    const block = isRecord(e.content_block) ? e.content_block : {};
    switch (block.type) {
      case 'text': {
        this.blocks.set(index, { kind: 'text' });
        return typeof block.text === 'string' ? this.text(block.text) : [];
      }
      case 'tool_use': {
        if (typeof block.id !== 'string' || typeof block.name !== 'string') {
          throw protocolError('upstream tool_use block has no id or name');
        }
        const toolIndex = this.toolCalls++;
        this.blocks.set(index, { kind: 'tool', toolIndex, startInput: block.input, argumentsSent: false });
        return [
          delta({ tool_calls: [{ index: toolIndex, id: block.id, type: 'function', function: { name: block.name, arguments: '' } }] }),
        ];
      }
      case 'thinking':
      case 'redacted_thinking':
        this.blocks.set(index, { kind: 'thinking' });
        return [];
      default:
        this.blocks.set(index, { kind: 'other' });
        return [];
    }
  }

  private blockDelta(e: Record<string, unknown>): StreamEvent[] {
    const index = blockIndex(e);
    const d = isRecord(e.delta) ? e.delta : {};
    const block = this.blocks.get(index);
    switch (d.type) {
      case 'text_delta':
        if (typeof d.text !== 'string') throw protocolError('upstream text_delta has no text');
        return block === undefined || block.kind === 'text' ? this.text(d.text) : [];
      case 'input_json_delta': {
        if (block === undefined) throw protocolError(`upstream input_json_delta for block ${index}, which never started`);
        if (block.kind !== 'tool' || typeof d.partial_json !== 'string' || d.partial_json.length === 0) return [];
        block.argumentsSent = true;
        return [delta({ tool_calls: [{ index: block.toolIndex, function: { arguments: d.partial_json } }] })];
      }
      case 'thinking_delta':
        // Relayed as reasoning_content; even empty, a delta keeps the stall deadline honest while it thinks.
        return [delta(typeof d.thinking === 'string' && d.thinking.length > 0 ? { reasoning_content: d.thinking } : {})];
      default:
        return [];
    }
  }

  /**
   * A tool without parameters streams no input at all; OpenAI clients expect `"{}"`, not `""`, to parse.
   * Anthropic sends the input only through deltas, but a block that carried it whole at its start is honoured.
   */
  private blockStop(e: Record<string, unknown>): StreamEvent[] {
    const block = this.blocks.get(blockIndex(e));
    if (block?.kind !== 'tool' || block.argumentsSent) return [];
    block.argumentsSent = true;
    const args = JSON.stringify(isRecord(block.startInput) ? block.startInput : {});
    return [delta({ tool_calls: [{ index: block.toolIndex, function: { arguments: args } }] })];
  }

  private messageStop(): StreamEvent[] {
    this.stopped = true;
    const events: StreamEvent[] = [
      {
        type: 'delta',
        delta: {},
        finishReason: finishReasonOf(this.stopReason, this.toolCalls > 0),
        ...(this.stopSequence !== null ? { stopSequence: this.stopSequence } : {}),
      },
    ];
    const tokens = tokensOf(this.usage);
    if (tokens) events.push({ type: 'usage', usage: tokens });
    return events;
  }

  private text(raw: string): StreamEvent[] {
    const text = this.echo ? this.echo.take(raw) : raw;
    return text.length > 0 ? [delta({ content: text })] : [];
  }
}

function blockIndex(e: Record<string, unknown>): number {
  if (typeof e.index !== 'number' || !Number.isInteger(e.index)) throw protocolError('upstream content block event has no index');
  return e.index;
}

function withoutNulls(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== null && v !== undefined));
}

/** The events of a Messages stream body; abandoning them at any point cancels the body. */
export function cancellableEvents(
  body: UpstreamBody,
  signal: StopSignalLike,
  echo: PrefillEcho | null,
): AsyncIterableIterator<readonly StreamEvent[]> {
  return cancelBodyOnEarlyReturn(body, readMessageStream(body, signal, echo));
}
