/**
 * A streaming completion. The first target that accepts the call is committed to; from then on every
 * upstream event becomes one `chat.completion.chunk`, written as it arrives. The stream ends in exactly
 * one of three ways, each settling the hold once:
 * - the upstream finished: usage chunk (if asked), `svc` chunk, `[DONE]`;
 * - the upstream failed mid-stream: charge what was delivered, `svc` chunk, an error chunk, `[DONE]`;
 * - the client went away: abort the upstream and charge the prompt plus what was delivered.
 */
import { estimateDeliveredTokens } from '../billing/token-estimate.js';
import type { ChatCompletionChunk, ChunkDelta, FinishReason } from '../openai/chat-types.js';
import type { StreamEvent, UpstreamTokens } from '../providers/contract.js';
import { AllTargetsFailed, asUpstreamError, firstAccepting, type Attempt } from '../routing/failover.js';
import type { Target } from '../routing/router.js';
import { encodeSseDone, encodeSseJson } from '../streaming/sse-encode.js';
import { meter, svcMetadata, usageRecord, type CompletionContext } from './context.js';
import { upstreamErrorToGateway } from './upstream-errors.js';

type Ending = 'completed' | 'upstream_error' | 'client_closed';

export async function startStreaming(ctx: CompletionContext): Promise<ReadableStream<Uint8Array>> {
  const upstreamAbort = new AbortController();
  const onClientGone = (): void => upstreamAbort.abort();
  ctx.clientSignal.addEventListener('abort', onClientGone, { once: true });
  const request = { ...ctx.request, max_tokens: ctx.quote.maxOutputTokens };

  let started: { value: AsyncIterable<StreamEvent>; target: Target; attempts: Attempt[] };
  try {
    started = await firstAccepting(ctx.route.targets, (target) =>
      target.adapter.stream({ request, model: target.model, signal: upstreamAbort.signal }),
    );
  } catch (e) {
    ctx.clientSignal.removeEventListener('abort', onClientGone);
    await ctx.meter.void();
    if (e instanceof AllTargetsFailed) throw upstreamErrorToGateway(e);
    throw e;
  }
  const { target, attempts } = started;
  const events = started.value[Symbol.asyncIterator]();

  let text = '';
  let deltas = 0;
  let usage: UpstreamTokens | null = null;
  let ended = false;
  const withUsage = ctx.request.include_usage;

  const chunk = (delta: ChunkDelta, finish: FinishReason | null): Uint8Array => {
    const c: ChatCompletionChunk = {
      id: ctx.completionId,
      object: 'chat.completion.chunk',
      created: ctx.created,
      model: ctx.route.entry.id,
      choices: [{ index: 0, delta, finish_reason: finish }],
    };
    if (withUsage) c.usage = null;
    return encodeSseJson(c);
  };
  const tail = (extra: Partial<ChatCompletionChunk>): Uint8Array =>
    encodeSseJson({
      id: ctx.completionId,
      object: 'chat.completion.chunk',
      created: ctx.created,
      model: ctx.route.entry.id,
      choices: [],
      ...extra,
    } satisfies ChatCompletionChunk);

  /** Settles once and returns the closing bytes for this ending. */
  const finish = async (how: Ending): Promise<Uint8Array[]> => {
    ended = true;
    ctx.clientSignal.removeEventListener('abort', onClientGone);
    const delivered = estimateDeliveredTokens(text, deltas);
    const m = meter(ctx, how === 'completed' ? usage : null, delivered);
    // An upstream that failed before sending anything delivered nothing: release the whole hold.
    const settled =
      how === 'upstream_error' && deltas === 0
        ? await ctx.meter.void()
        : await ctx.meter.settle(m.cost, usageRecord(ctx, target, m, how));
    const charged = settled.charged === 0 ? { ...m, prompt: 0, completion: 0 } : m;
    const out: Uint8Array[] = [];
    if (withUsage && how === 'completed') {
      const u = usage ?? { promptTokens: m.prompt, completionTokens: m.completion };
      out.push(
        tail({
          usage: {
            prompt_tokens: u.promptTokens,
            completion_tokens: u.completionTokens,
            total_tokens: u.promptTokens + u.completionTokens,
          },
        }),
      );
    }
    out.push(tail({ svc: svcMetadata(ctx, target, charged, settled, attempts) }));
    return out;
  };

  const errorEvent = (code: string, type: string, message: string): Uint8Array =>
    encodeSseJson({ error: { message, type, param: null, code } });

  /**
   * Closes the stream explicitly whatever happens: never a silent cut. If the ledger cannot be written
   * (database down), the answer was still delivered; the hold stays pending and the reaper releases it,
   * so the client is never charged twice nor overcharged, and is told so.
   */
  const end = async (
    controller: ReadableStreamDefaultController<Uint8Array>,
    how: Exclude<Ending, 'client_closed'>,
    upstreamFailure: string | null,
  ): Promise<void> => {
    try {
      for (const bytes of await finish(how)) controller.enqueue(bytes);
    } catch {
      controller.enqueue(
        errorEvent('store_unavailable', 'api_error', 'The answer was delivered but the ledger could not be reached to confirm its charge; it is billed at most once.'),
      );
    }
    if (upstreamFailure !== null) controller.enqueue(errorEvent('upstream_stream_error', 'upstream_error', upstreamFailure));
    controller.enqueue(encodeSseDone());
    controller.close();
  };

  return new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(chunk({ role: 'assistant', content: '' }, null));
    },
    // Loops until it enqueues something: a pull that returns without enqueuing is not called again.
    async pull(controller) {
      for (;;) {
        if (ended) return;
        let next: IteratorResult<StreamEvent>;
        try {
          next = await events.next();
        } catch (raw) {
          if (ended) return;
          const e = asUpstreamError(raw);
          await end(controller, 'upstream_error', `The upstream stream failed: ${e.message}`);
          return;
        }
        if (ended) return;
        if (next.done) {
          await end(controller, 'completed', null);
          return;
        }
        const ev = next.value;
        if (ev.type === 'usage') {
          usage = ev.usage;
          continue;
        }
        const { role: _role, ...delta } = ev.delta;
        // Upstreams open with an empty role delta (`content: ""`): the gateway already sent its own.
        const hasContent = !!delta.content || !!delta.refusal || delta.tool_calls !== undefined;
        if (!hasContent && ev.finishReason === null) continue;
        if (hasContent) {
          deltas++;
          if (delta.content) text += delta.content;
          if (delta.refusal) text += delta.refusal;
          for (const call of delta.tool_calls ?? []) text += (call.function?.name ?? '') + (call.function?.arguments ?? '');
        }
        controller.enqueue(chunk(delta, ev.finishReason));
        return;
      }
    },
    async cancel() {
      if (ended) return;
      upstreamAbort.abort();
      events.return?.().catch(() => undefined);
      await finish('client_closed');
    },
  });
}
