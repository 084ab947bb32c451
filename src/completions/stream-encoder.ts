/**
 * What a front door writes of a streamed completion (src/completions/streaming.ts drives it). The stream's
 * life (failover, deadlines, the hold, the write deadline, shutdown) is the same behind every door; only
 * the frames differ: chat completions (src/openai/chat-stream-encoder.ts), legacy completions
 * (src/openai/legacy-stream-encoder.ts), Anthropic Messages (src/anthropic/messages-stream-encoder.ts),
 * Responses (src/responses/responses-stream-encoder.ts). One encoder per stream: it may keep state (ids, open blocks).
 */
import type { ChoiceLogprobs, ChunkDelta, FinishReason, SvcMetadata } from '../openai/chat-types.js';
import type { UpstreamMeta } from '../providers/contract.js';
import type { Settlement } from './completion.js';

/** The upstream's last delta, the one with the finish reason, held back until the hold settled. */
export interface Finishing {
  delta: ChunkDelta;
  finish: FinishReason;
  logprobs?: ChoiceLogprobs;
  /** The stop sequence that ended it, where the upstream said (the Anthropic door reports it). */
  stopSequence?: string;
}

/** Why the answer did not finish, said to the client in the door's own error event. */
export interface StreamFailure {
  code: 'upstream_stream_error' | 'gateway_shutting_down' | 'internal_error';
  message: string;
}

/**
 * Every method returns SSE text (src/streaming/sse-encode.ts): zero or more whole frames, '' for none. The
 * stream joins a read's worth and encodes it once.
 */
export interface StreamEncoder {
  /** Written when the stream starts, before any upstream event. */
  opening(): string;
  /** One delta of the answer (never the finishing one). `meta`: what the serving upstream said of itself so far. */
  delta(delta: ChunkDelta, logprobs: ChoiceLogprobs | undefined, meta: UpstreamMeta): string;
  /**
   * The closing frames, once the hold settled: the finishing delta (null when the answer did not finish,
   * or finished without one), what was charged, and why it did not finish (null when it did).
   */
  closing(finishing: Finishing | null, settlement: Settlement, svc: SvcMetadata, failure: StreamFailure | null, meta: UpstreamMeta): string;
  /**
   * Awaited between `closing` and writing its frames: work the last frame announces as done (the Responses
   * door keeps the finished response, so a client that continues the conversation at once finds it).
   */
  beforeClosingWritten?(): Promise<void>;
  /** Closing the answer failed (a bug): the door's error event. */
  internalError(failure: StreamFailure): string;
  /** The stream's last frame (OpenAI's `data: [DONE]`), or null for doors that have none. */
  done(): string | null;
}
