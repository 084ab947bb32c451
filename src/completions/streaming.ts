/**
 * A streaming completion. The response starts once a target accepted the call; from then on every upstream
 * event becomes one `chat.completion.chunk`, written as it arrives. Failover (src/routing/failover.ts) may
 * switch targets underneath, before the first token or, from the partial text, after it: the client sees one
 * stream with one id, and SSE comments while it waits. The stream ends in exactly one of three ways, each
 * settling the hold once:
 * - the answer finished: usage chunk (if asked), `svc` chunk, `[DONE]`;
 * - nothing could finish it: charge what was delivered, `svc` chunk, an error chunk, `[DONE]`;
 * - the client went away: abort the upstream and charge the prompt plus what was delivered.
 */
import { estimateDeliveredTokens } from '../billing/token-estimate.js';
import type { ChatCompletionChunk, ChunkDelta, FinishReason } from '../openai/chat-types.js';
import type { UpstreamTokens } from '../providers/contract.js';
import { AllTargetsFailed, FailoverStream, asUpstreamError, type FailoverEvent } from '../routing/failover.js';
import { encodeSseComment, encodeSseDone, encodeSseJson } from '../streaming/sse-encode.js';
import { failoverOptions, meter, svcMetadata, usageRecord, type CompletionContext } from './context.js';
import { upstreamErrorToGateway } from './upstream-errors.js';

type Ending = 'completed' | 'upstream_error' | 'client_closed';

export async function startStreaming(ctx: CompletionContext): Promise<ReadableStream<Uint8Array>> {
  let events: FailoverStream;
  try {
    events = await FailoverStream.open(failoverOptions(ctx, 'continue'));
  } catch (e) {
    await ctx.meter.void();
    if (e instanceof AllTargetsFailed) throw upstreamErrorToGateway(e);
    throw e;
  }

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

  /** Tokens to charge: exact from the upstream when one attempt gave the whole answer, else estimated. */
  const tokensToCharge = (how: Ending): UpstreamTokens | null => {
    const prefix = events.splicedPrefix;
    if (how !== 'completed') return null;
    if (prefix === null) return usage;
    // The last attempt's usage counts its own prompt, which carried the partial answer, and only its new
    // text: the client is charged its own prompt once and every token it received.
    const tail = text.slice(prefix.text.length);
    const before = estimateDeliveredTokens(prefix.text, prefix.deltas);
    return {
      promptTokens: ctx.quote.promptTokens,
      completionTokens: before + (usage?.completionTokens ?? estimateDeliveredTokens(tail, deltas - prefix.deltas)),
    };
  };

  /** Settles once and returns the closing bytes for this ending. */
  const finish = async (how: Ending): Promise<Uint8Array[]> => {
    ended = true;
    clearInterval(keepalive);
    const m = meter(ctx, tokensToCharge(how), estimateDeliveredTokens(text, deltas));
    const target = events.target;
    // An upstream that failed before sending anything delivered nothing: release the whole hold.
    const settled =
      how === 'upstream_error' && deltas === 0
        ? await ctx.meter.void()
        : await ctx.meter.settle(m.cost, usageRecord(ctx, target, m, how));
    const charged = settled.charged === 0 ? { ...m, prompt: 0, completion: 0 } : m;
    const out: Uint8Array[] = [];
    if (withUsage && how === 'completed') {
      out.push(
        tail({
          usage: { prompt_tokens: m.prompt, completion_tokens: m.completion, total_tokens: m.prompt + m.completion },
        }),
      );
    }
    out.push(tail({ svc: svcMetadata(ctx, target, charged, settled, events.attempts) }));
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

  // While failover waits on a slow or failing upstream, comments keep proxies from closing an idle stream.
  let wrote = true;
  let keepalive: ReturnType<typeof setInterval> | undefined;
  let sink: ReadableStreamDefaultController<Uint8Array> | null = null;

  return new ReadableStream<Uint8Array>({
    start(controller) {
      sink = controller;
      controller.enqueue(chunk({ role: 'assistant', content: '' }, null));
      keepalive = setInterval(() => {
        if (!wrote && !ended) sink?.enqueue(encodeSseComment());
        wrote = false;
      }, ctx.keepaliveMs);
    },
    // Loops until it enqueues something: a pull that returns without enqueuing is not called again.
    async pull(controller) {
      for (;;) {
        if (ended) return;
        let next: IteratorResult<FailoverEvent>;
        try {
          next = await events.next();
        } catch (raw) {
          if (ended) return;
          const message =
            raw instanceof AllTargetsFailed
              ? `The upstream stream failed and no other target could continue it (${raw.attempts.map((a) => `${a.provider}/${a.model}: ${a.outcome}`).join(', ')}).`
              : `The upstream stream failed: ${asUpstreamError(raw).message}`;
          await end(controller, 'upstream_error', message);
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
        if (ev.type === 'restart') continue;
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
        wrote = true;
        controller.enqueue(chunk(delta, ev.finishReason));
        return;
      }
    },
    async cancel() {
      if (ended) return;
      // Set before awaiting: a pull whose upstream read fails on the abort must not end the stream too.
      ended = true;
      clearInterval(keepalive);
      await events.return();
      await finish('client_closed');
    },
  });
}
