/**
 * The sandbox server's streamed answer as SSE frames, with pacing and mid-stream faults applied. A generator
 * rather than a push loop, so the body is produced only as fast as the client reads it.
 */
import { SSE_DONE, sseBytes, sseData, sseJson } from '../../streaming/sse-encode.js';
import { failureTokenIndex, type FailureFault, type FaultPlan } from './faults.js';
import { TokenClock, sleep, untilAborted } from './pacing.js';
import type { SimulatedCompletion } from './simulator.js';
import { chunkObject, malformedChunkText, usageChunkObject, type ResponseMeta } from './wire-format.js';

export interface FrameContext {
  sim: SimulatedCompletion;
  plan: FaultPlan;
  meta: ResponseMeta;
  includeUsage: boolean;
  signal: AbortSignal;
  /** Resets the connection (runtime hook); null where the runtime has none. */
  reset: (() => void) | null;
}

/** Lets the frames written before a reset reach the client first, so "reset after N tokens" means N arrive. */
const FLUSH_BEFORE_RESET_MS = 30;

export async function* sseFrames(ctx: FrameContext): AsyncGenerator<Uint8Array, void, undefined> {
  const { sim, plan, meta, includeUsage, signal } = ctx;
  const clock = new TokenClock(plan.pace, signal);
  if (plan.failure?.type === 'stall_before_first_token') await untilAborted(signal);
  await clock.beforeToken(0);
  yield sseBytes(sseJson(chunkObject(meta, sim.firstDelta, null, includeUsage)));
  const total = sim.tokenDeltas.length;
  const failAt = Math.min(failureTokenIndex(plan.failure) ?? Number.POSITIVE_INFINITY, total);
  for (let i = 0; i < total || i === failAt; i++) {
    if (i === failAt && plan.failure) {
      const frame = await strike(plan.failure, ctx);
      if (frame) yield frame;
      return;
    }
    const delta = sim.tokenDeltas[i];
    if (!delta) break;
    if (i > 0) await clock.beforeToken(i);
    yield sseBytes(sseJson(chunkObject(meta, delta, null, includeUsage)));
  }
  yield sseBytes(sseJson(chunkObject(meta, {}, sim.finishReason, includeUsage)));
  if (includeUsage) yield sseBytes(sseJson(usageChunkObject(meta, sim.usage)));
  yield sseBytes(SSE_DONE);
}

/** Applies a mid-stream failure; returns a last frame to send (the malformed one) before the body ends. */
async function strike(failure: FailureFault, ctx: FrameContext): Promise<Uint8Array | null> {
  switch (failure.type) {
    case 'stall_after_tokens':
      return untilAborted(ctx.signal);
    case 'malformed_chunk':
      return sseBytes(sseData(malformedChunkText(ctx.meta)));
    case 'reset':
      await sleep(FLUSH_BEFORE_RESET_MS, ctx.signal);
      if (!ctx.reset) throw new Error('sandbox reset fault: this runtime cannot reset a connection; body errored instead');
      ctx.reset();
      return untilAborted(ctx.signal);
    default:
      // cut_after_tokens: end the body here, with neither a finish_reason nor [DONE].
      return null;
  }
}

/** A pull-driven body over the frames; cancelling it (client gone) aborts pacing timers and ends the generator. */
export function framesBody(frames: AsyncGenerator<Uint8Array, void, undefined>, onCancel: () => void): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const next = await frames.next();
          if (next.done) controller.close();
          else controller.enqueue(next.value);
        } catch (err) {
          controller.error(err);
        }
      },
      cancel() {
        onCancel();
        frames.return().catch(() => {});
      },
    },
    { highWaterMark: 0 },
  );
}
