/**
 * A streaming completion, as explicit states:
 *
 *   open ──► relaying ──► ending ──► closed
 *     └──────────────────────────────►┘  (no target accepted: an HTTP error, no stream)
 *
 * - open: failover looks for a target that accepts the call; the response has not started.
 * - relaying: every upstream event becomes the door's frames (its StreamEncoder: ./stream-encoder.ts),
 *   written as it arrives. Failover may switch targets underneath (before the first token, or from the
 *   partial text after it): the client sees one stream with one id, and SSE comments while it waits.
 * - ending: the completion's owner settles the hold once (src/completions/completion.ts), then the door's
 *   closing frames go out. The delta that carries the finish reason is held back until then, so that the
 *   door can say what was charged with it (chat: `svc` on that chunk, or on the usage chunk).
 * - closed: nothing more is written.
 *
 * What moves a stream to ending: the answer finished; nothing could finish it; the client went away; the
 * client stopped reading for longer than the write deadline (the stream is then cut: it could not read an
 * error event anyway); the gateway shut down. Each is one ending of src/billing/charge.ts.
 */
import type { Ending } from '../billing/charge.js';
import { type Deadline, repeatEvery } from '../core/deadline-timers.js';
import { ChatStreamEncoder } from '../openai/chat-stream-encoder.js';
import type { ChunkDelta } from '../openai/chat-types.js';
import type { UpstreamMeta } from '../providers/contract.js';
import { AllTargetsFailed, asUpstreamError, type FailoverBatch } from '../routing/failover.js';
import type { ByteSink, ByteSource } from '../streaming/byte-source.js';
import { sseBytes, sseComment } from '../streaming/sse-encode.js';
import type { Completion } from './completion.js';
import type { Finishing, StreamEncoder, StreamFailure } from './stream-encoder.js';
import { completionError, endingOfFailure } from './upstream-errors.js';

export type StreamState = 'open' | 'relaying' | 'ending' | 'closed';

const TRANSITIONS: Record<StreamState, readonly StreamState[]> = {
  open: ['relaying', 'closed'],
  relaying: ['ending'],
  ending: ['closed'],
  closed: [],
};

/** The state of one stream; a transition the diagram does not have is a bug, and throws. */
export class StreamStates {
  state: StreamState = 'open';

  to(next: StreamState): void {
    if (!TRANSITIONS[this.state].includes(next)) throw new Error(`stream state ${this.state} -> ${next} is not allowed`);
    this.state = next;
  }
}

export interface StreamOptions {
  /** Receives every frame written to the client, as the text it was encoded from (an idempotent request's recording). */
  tap?: (frames: string) => void;
  /**
   * Called when the answer ended whole, once every frame but the final `[DONE]` was written and tapped
   * (`[DONE]` is tapped too): the client sees `[DONE]` only after it resolves, so an idempotent request is
   * recorded before its client can send the retry that should replay it.
   */
  beforeDone?: (ending: Ending) => Promise<void>;
  /** Called once the stream is closed, with how it ended. */
  onClosed?: (ending: Ending) => void;
  /**
   * Cuts the client's connection (a runtime capability): an errored stream is not enough on Node, whose
   * writer, blocked on a client that does not read, never reads the error.
   */
  abandonConnection?: (error: Error) => void;
  /** The door's framing; default: chat completions. */
  encoder?: StreamEncoder;
}

/**
 * `meta` with what `update` says, the same object when it says nothing new: an upstream that repeats its
 * system_fingerprint on every chunk must not give the encoder a new meta per chunk (the chat encoder keeps
 * its chunks' head serialized while the meta object stays the same).
 */
function withMeta(meta: UpstreamMeta, update: UpstreamMeta): UpstreamMeta {
  for (const key of Object.keys(update) as (keyof UpstreamMeta)[]) {
    if (update[key] !== meta[key]) return { ...meta, ...update };
  }
  return meta;
}

function chatStreamEncoder(completion: Completion): StreamEncoder {
  const { spec } = completion;
  return new ChatStreamEncoder(spec.completionId, completion.created, spec.route.entry.id, spec.request.include_usage);
}

/**
 * Opens the stream (failover finds a target that accepts the call) and returns its bytes as a pulled source;
 * throws the completion's error, its hold ended, when no target accepted.
 */
export async function startStreaming(completion: Completion, options: StreamOptions = {}): Promise<ByteSource> {
  const states = new StreamStates();
  try {
    await completion.failover.open();
  } catch (e) {
    await completion.end(endingOfFailure(completion, e));
    states.to('closed');
    throw completionError(completion, e);
  }
  states.to('relaying');

  const { keepaliveMs, writeTimeoutMs } = completion.limits;
  const relayReasoning = completion.limits.relayReasoning !== false;
  const encoder = options.encoder ?? chatStreamEncoder(completion);
  /** What the serving upstream said of itself (system_fingerprint, service_tier), as it arrives. */
  let meta: UpstreamMeta = {};
  /** The delta with the finish reason, written once the hold settled (it carries `svc`). */
  let finishing: Finishing | null = null;

  let sink: ByteSink | null = null;
  /** The client cancelled the stream (or it was cut): nothing more may be enqueued. */
  let detached = false;
  // The recording gets every frame, also those a client that left at the very end no longer takes: its
  // retry replays the whole answer it paid for.
  const write = (frames: string): void => {
    if (frames === '') return;
    options.tap?.(frames);
    if (!detached) sink?.enqueue(sseBytes(frames));
  };
  /** True while a pull waits on the upstream; false while the client holds the stream back. */
  let pulling = false;
  let lastPullAt = performance.now();
  /** When the last event of the answer (or a keep-alive comment) was written. */
  let lastWroteAt = performance.now();
  let ticker: Deadline | null = null;

  /**
   * relaying -> ending -> closed, written to the client: never a silent cut. The client may go away while
   * the hold settles; from then on the frames have nowhere to go (`write` drops them), and the stream still
   * reaches `closed`.
   */
  const finish = async (ending: Ending, failureMessage: string | null): Promise<void> => {
    if (states.state !== 'relaying') return;
    states.to('ending');
    stopTicker();
    const failure: StreamFailure | null =
      failureMessage === null ? null : { code: ending === 'shutdown' ? 'gateway_shutting_down' : 'upstream_stream_error', message: failureMessage };
    try {
      const settled = await completion.end(ending);
      const frames = encoder.closing(finishing, settled, completion.svcMetadata(settled), failure, meta);
      if (encoder.beforeClosingWritten) await encoder.beforeClosingWritten();
      write(frames);
    } catch {
      // Not a ledger outage (the owner keeps retrying those itself): a bug, said as such.
      write(encoder.internalError({ code: 'internal_error', message: 'The gateway failed to close this answer. It has been logged.' }));
    } finally {
      const doneFrame = encoder.done();
      if (doneFrame !== null) options.tap?.(doneFrame);
      if (options.beforeDone) await options.beforeDone(ending).catch(() => undefined);
      if (!detached) {
        if (doneFrame !== null) sink?.enqueue(sseBytes(doneFrame));
        sink?.close();
      }
      detached = true;
      states.to('closed');
      options.onClosed?.(ending);
    }
  };

  /** Ends the stream without closing frames: the client is gone or cannot read them. */
  const drop = async (ending: Ending, error: Error | null): Promise<void> => {
    if (states.state !== 'relaying') return;
    states.to('ending');
    stopTicker();
    if (error !== null && !detached) {
      detached = true;
      // Cutting the connection cancels the stream; where the runtime cannot, the errored stream ends it.
      if (options.abandonConnection) options.abandonConnection(error);
      else sink?.error(error);
    }
    detached = true;
    try {
      await completion.end(ending);
    } catch {
      // Logged by the owner; nobody is left to tell.
    } finally {
      states.to('closed');
      options.onClosed?.(ending);
    }
  };

  const stopTicker = (): void => {
    ticker?.cancel();
    ticker = null;
  };

  const failureMessage = (raw: unknown): string =>
    raw instanceof AllTargetsFailed
      ? `The upstream stream failed and no other target could continue it (${raw.attempts.map((a) => `${a.provider}/${a.model}: ${a.outcome}`).join(', ')}).`
      : `The upstream stream failed: ${asUpstreamError(raw).message}`;

  completion.onInterrupt((reason) => {
    // A pull waiting on the upstream sees the abort and ends the stream itself.
    if (pulling) return;
    if (reason === 'shutdown') void finish('shutdown', 'The gateway is shutting down; the answer was cut here.');
    else void drop(reason, new Error('the client stopped reading'));
  });

  /**
   * Writes a batch's frames, joined into one chunk so that a read's worth of events reaches the client in
   * one write; false when it had none to write (nothing but a finish, or deltas without content).
   */
  const relay = (batch: FailoverBatch): boolean => {
    let out = '';
    for (const ev of batch) {
      if (ev.type === 'restart') continue;
      if (ev.meta !== undefined) meta = withMeta(meta, ev.meta);
      if (ev.type !== 'delta') continue;
      let delta: ChunkDelta = ev.delta;
      if (delta.role !== undefined || delta.reasoning_content !== undefined) {
        const { role: _role, reasoning_content: reasoning, ...rest } = delta;
        delta = relayReasoning && reasoning ? { ...rest, reasoning_content: reasoning } : rest;
      }
      // Upstreams open with an empty role delta (`content: ""`): the gateway already sent its own.
      const hasContent = !!delta.content || !!delta.refusal || delta.tool_calls !== undefined || delta.reasoning_content !== undefined;
      if (!hasContent && ev.finishReason === null && ev.logprobs === undefined) continue;
      if (ev.finishReason !== null) {
        // Held until the hold settled. A second finish (an upstream that sends two) keeps the first's content.
        if (finishing !== null) out += encoder.delta(finishing.delta, finishing.logprobs, meta);
        finishing = {
          delta,
          finish: ev.finishReason,
          ...(ev.logprobs !== undefined ? { logprobs: ev.logprobs } : {}),
          ...(ev.stopSequence !== undefined ? { stopSequence: ev.stopSequence } : {}),
        };
        continue;
      }
      out += encoder.delta(delta, ev.logprobs, meta);
    }
    if (out === '') return false;
    write(out);
    lastWroteAt = performance.now();
    return true;
  };

  return {
    start(controller) {
      sink = controller;
      write(encoder.opening());
      // A quarter of the shorter period: each deadline is kept within 25% of its value (a tick of the whole
      // period would let a stream run up to twice the write deadline).
      ticker = repeatEvery(Math.max(25, Math.min(keepaliveMs, writeTimeoutMs) / 4), () => {
        if (states.state !== 'relaying') return;
        const now = performance.now();
        if (!pulling && now - lastPullAt >= writeTimeoutMs) {
          completion.interrupt('write_timeout');
          return;
        }
        // While failover waits on a slow or failing upstream, comments keep proxies from closing an idle stream.
        if (pulling && now - lastWroteAt >= keepaliveMs) {
          write(sseComment());
          lastWroteAt = now;
        }
      });
    },
    // Loops until it writes something: a pull that returns without enqueuing is not called again.
    async pull() {
      lastPullAt = performance.now();
      pulling = true;
      try {
        for (;;) {
          if (states.state !== 'relaying') return;
          let next: IteratorResult<FailoverBatch>;
          try {
            next = await completion.failover.next();
          } catch (raw) {
            const ending = endingOfFailure(completion, raw);
            if (ending === 'client_closed') await drop(ending, null);
            else if (ending === 'write_timeout') await drop(ending, new Error('the client stopped reading'));
            else if (ending === 'shutdown') await finish(ending, 'The gateway is shutting down; the answer was cut here.');
            else await finish(ending, failureMessage(raw));
            return;
          }
          if (next.done) {
            await finish('completed', null);
            return;
          }
          // A door may have nothing to say for a batch (the legacy door for reasoning, Anthropic's for an
          // empty argument piece): read on, since a pull that enqueues nothing is not called again.
          if (relay(next.value)) return;
        }
      } finally {
        pulling = false;
        lastPullAt = performance.now();
      }
    },
    async cancel() {
      detached = true;
      await drop('client_closed', null);
    },
  };
}
