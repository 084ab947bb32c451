/**
 * The Responses door's stream, OpenAI's Responses event sequence: `response.created`, `response.in_progress`;
 * per output item `response.output_item.added`, its parts and deltas (`response.output_text.delta`,
 * `response.function_call_arguments.delta`, `response.reasoning_summary_text.delta`), their `.done` events and
 * `response.output_item.done`; then `response.completed` (or `response.incomplete`, or `response.failed` for
 * an answer that could not finish), whose response carries usage and our `svc`. Every event has a
 * `sequence_number`; there is no `[DONE]`. Internal deltas arrive as chat deltas: a change of kind (reasoning,
 * text, a tool call's index) closes the open item and opens the next.
 */
import type { Settlement } from '../completions/completion.js';
import type { Finishing, StreamEncoder, StreamFailure } from '../completions/stream-encoder.js';
import { tokenUsage } from '../completions/token-usage.js';
import type { ChoiceLogprobs, ChunkDelta, SvcMetadata } from '../openai/chat-types.js';
import type { UpstreamMeta } from '../providers/contract.js';
import { sseEvent } from '../streaming/sse-encode.js';
import { itemId } from './response-ids.js';
import {
  type FunctionCallItem,
  type MessageItem,
  type OutputItem,
  type ReasoningItem,
  type ResponseFrame,
  type ResponseObject,
  responseObject,
  responsesLogprobs,
  responsesUsage,
  statusOf,
} from './responses-response.js';

type Open =
  | { kind: 'reasoning'; item: ReasoningItem; index: number }
  | { kind: 'message'; item: MessageItem; index: number; part: 'output_text' | 'refusal' }
  | { kind: 'tool'; item: FunctionCallItem; index: number; toolIndex: number };

/** Called with the finished response before its last event is written (the door keeps it for later turns). */
export type KeepResponse = (response: ResponseObject) => Promise<void>;

export class ResponsesStreamEncoder implements StreamEncoder {
  private sequence = 0;
  private readonly output: OutputItem[] = [];
  private open: Open | null = null;
  private keeping: Promise<void> | null = null;

  constructor(
    private readonly frame: ResponseFrame,
    private readonly keep: KeepResponse | null,
  ) {}

  opening(): string {
    const response = responseObject(this.frame, { status: 'in_progress', output: [], usage: null });
    return this.event('response.created', { response }) + this.event('response.in_progress', { response });
  }

  delta(delta: ChunkDelta, logprobs: ChoiceLogprobs | undefined): string {
    const out: string[] = [];
    if (delta.reasoning_content) {
      const open = this.ensureReasoning(out);
      (open.item.summary[0] as { text: string }).text += delta.reasoning_content;
      out.push(this.event('response.reasoning_summary_text.delta', { item_id: open.item.id, output_index: open.index, summary_index: 0, delta: delta.reasoning_content }));
    }
    if (delta.content) {
      const open = this.ensureMessage('output_text', out);
      const part = open.item.content.at(-1);
      if (part?.type === 'output_text') {
        part.text += delta.content;
        const lp = responsesLogprobs(logprobs);
        part.logprobs.push(...lp);
        out.push(this.event('response.output_text.delta', { item_id: open.item.id, output_index: open.index, content_index: open.item.content.length - 1, delta: delta.content, logprobs: lp }));
      }
    }
    if (delta.refusal) {
      const open = this.ensureMessage('refusal', out);
      const part = open.item.content.at(-1);
      if (part?.type === 'refusal') {
        part.refusal += delta.refusal;
        out.push(this.event('response.refusal.delta', { item_id: open.item.id, output_index: open.index, content_index: open.item.content.length - 1, delta: delta.refusal }));
      }
    }
    for (const piece of delta.tool_calls ?? []) {
      const open = this.ensureTool(piece.index, piece.id, piece.function?.name, out);
      const args = piece.function?.arguments;
      if (args) {
        open.item.arguments += args;
        out.push(this.event('response.function_call_arguments.delta', { item_id: open.item.id, output_index: open.index, delta: args }));
      }
    }
    return out.join('');
  }

  closing(finishing: Finishing | null, s: Settlement, svc: SvcMetadata, failure: StreamFailure | null, meta: UpstreamMeta): string {
    const out: string[] = [];
    if (finishing !== null) out.push(this.delta(finishing.delta, finishing.logprobs));
    const finish = finishing?.finish ?? 'stop';
    const { status, incomplete } = failure !== null ? { status: 'failed' as const, incomplete: null } : statusOf(finish);
    this.close(out, status === 'completed' ? 'completed' : 'incomplete');
    const response = responseObject(this.frame, {
      status,
      incomplete,
      output: this.output,
      usage: responsesUsage(tokenUsage(s)),
      svc,
      ...(failure !== null ? { error: { code: 'server_error', message: failure.message } } : {}),
      ...(meta.serviceTier !== undefined ? { serviceTier: meta.serviceTier } : {}),
    });
    // A whole answer is kept before the client hears it ended, so its next turn finds it.
    if (failure === null && this.keep !== null) this.keeping = this.keep(response);
    const type = status === 'failed' ? 'response.failed' : status === 'incomplete' ? 'response.incomplete' : 'response.completed';
    out.push(this.event(type, { response }));
    return out.join('');
  }

  beforeClosingWritten(): Promise<void> {
    return this.keeping ?? Promise.resolve();
  }

  internalError(failure: StreamFailure): string {
    return this.event('error', { code: failure.code, message: failure.message, param: null });
  }

  done(): null {
    return null;
  }

  private event(type: string, fields: object): string {
    return sseEvent(type, { type, sequence_number: this.sequence++, ...fields });
  }

  private add(item: OutputItem, out: string[]): number {
    const index = this.output.length;
    this.output.push(item);
    out.push(this.event('response.output_item.added', { output_index: index, item: structuredClone(item) }));
    return index;
  }

  private ensureReasoning(out: string[]): Extract<Open, { kind: 'reasoning' }> {
    if (this.open?.kind === 'reasoning') return this.open;
    this.close(out, 'completed');
    const item: ReasoningItem = { type: 'reasoning', id: itemId(this.frame.id, 'rs', this.output.length), summary: [] };
    const index = this.add(item, out);
    item.summary.push({ type: 'summary_text', text: '' });
    out.push(this.event('response.reasoning_summary_part.added', { item_id: item.id, output_index: index, summary_index: 0, part: { type: 'summary_text', text: '' } }));
    this.open = { kind: 'reasoning', item, index };
    return this.open;
  }

  private ensureMessage(part: 'output_text' | 'refusal', out: string[]): Extract<Open, { kind: 'message' }> {
    let open = this.open;
    if (open?.kind !== 'message') {
      this.close(out, 'completed');
      const item: MessageItem = { type: 'message', id: itemId(this.frame.id, 'msg', this.output.length), status: 'in_progress', role: 'assistant', content: [] };
      open = { kind: 'message', item, index: this.add(item, out), part };
      this.open = open;
    } else if (open.part === part && open.item.content.length > 0) {
      return open;
    } else {
      this.closePart(open, out);
      open.part = part;
    }
    const content = part === 'output_text' ? { type: 'output_text' as const, text: '', annotations: [] as never[], logprobs: [] } : { type: 'refusal' as const, refusal: '' };
    open.item.content.push(content);
    out.push(this.event('response.content_part.added', { item_id: open.item.id, output_index: open.index, content_index: open.item.content.length - 1, part: structuredClone(content) }));
    return open;
  }

  private ensureTool(toolIndex: number, callId: string | undefined, name: string | undefined, out: string[]): Extract<Open, { kind: 'tool' }> {
    if (this.open?.kind === 'tool' && this.open.toolIndex === toolIndex) return this.open;
    this.close(out, 'completed');
    const id = itemId(this.frame.id, 'fc', this.output.length);
    const item: FunctionCallItem = { type: 'function_call', id, call_id: callId ?? `call_${id}`, name: name ?? '', arguments: '', status: 'in_progress' };
    this.open = { kind: 'tool', item, index: this.add(item, out), toolIndex };
    return this.open;
  }

  private closePart(open: Extract<Open, { kind: 'message' }>, out: string[]): void {
    const contentIndex = open.item.content.length - 1;
    const part = open.item.content[contentIndex];
    if (part === undefined) return;
    const at = { item_id: open.item.id, output_index: open.index, content_index: contentIndex };
    if (part.type === 'output_text') out.push(this.event('response.output_text.done', { ...at, text: part.text, logprobs: part.logprobs }));
    else out.push(this.event('response.refusal.done', { ...at, refusal: part.refusal }));
    out.push(this.event('response.content_part.done', { ...at, part: structuredClone(part) }));
  }

  private close(out: string[], status: 'completed' | 'incomplete'): void {
    const open = this.open;
    if (open === null) return;
    this.open = null;
    if (open.kind === 'reasoning') {
      const text = open.item.summary[0]?.text ?? '';
      const at = { item_id: open.item.id, output_index: open.index, summary_index: 0 };
      out.push(this.event('response.reasoning_summary_text.done', { ...at, text }));
      out.push(this.event('response.reasoning_summary_part.done', { ...at, part: { type: 'summary_text', text } }));
    } else if (open.kind === 'message') {
      this.closePart(open, out);
      open.item.status = status;
    } else {
      open.item.status = status;
      out.push(this.event('response.function_call_arguments.done', { item_id: open.item.id, output_index: open.index, name: open.item.name, arguments: open.item.arguments }));
    }
    out.push(this.event('response.output_item.done', { output_index: open.index, item: structuredClone(open.item) }));
  }
}
