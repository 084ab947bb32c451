/**
 * The adapter contract every provider implements. Adapters translate between the gateway's OpenAI-shaped
 * request and one upstream protocol; they never know about credits, keys or aliases. Web standards only.
 */
import type { AssistantMessage, ChatRequest, ChoiceLogprobs, ChunkDelta, FinishReason } from '../openai/chat-types.js';
import type { StopSignalLike } from '../core/stop-signal.js';

export interface UpstreamTokens {
  /** Every input token, cached ones included. */
  promptTokens: number;
  /** Every output token, reasoning included (each adapter adds what its provider reports apart). */
  completionTokens: number;
  /** Of promptTokens, those read from the provider's prompt cache; absent when it reported none. */
  cachedTokens?: number;
  /** Of completionTokens, those the model spent reasoning; absent when the provider does not say. */
  reasoningTokens?: number;
}

/** What the upstream says about the answer beside its content, relayed to the client as it said it. */
export interface UpstreamMeta {
  systemFingerprint?: string;
  serviceTier?: string;
  /** The model the upstream says answered (OpenAI's `model` on each chunk): traces only, never relayed. */
  model?: string;
}

export interface UpstreamCall {
  /** The request after validation; `max_tokens` is always set (the gateway's output bound). */
  request: ChatRequest & { max_tokens: number };
  /** Upstream model name as the provider knows it, e.g. `gpt-4o-mini`. */
  model: string;
  /** Aborted on client disconnect or deadline: the adapter must stop reading and close the upstream call. */
  signal: StopSignalLike;
  /**
   * Set when this call continues an answer another target started and could not finish: the client already
   * has `partial`. The adapter asks its upstream to go on from exactly there (a native assistant prefill where
   * the protocol has one, else src/providers/continuation.ts) and yields only the new text.
   */
  continuation?: { partial: string };
}

export interface UpstreamCompletion {
  message: AssistantMessage;
  finishReason: FinishReason;
  /** As reported by the upstream; null when it reported none (the gateway then estimates). */
  usage: UpstreamTokens | null;
  /** The model the upstream says answered (it may differ from the one asked for). */
  model: string | null;
  /** choices[0].logprobs of an OpenAI-compatible upstream; absent from the others. */
  logprobs?: ChoiceLogprobs | null;
  meta?: UpstreamMeta;
  /** The stop sequence that ended the answer, where the upstream says which (Anthropic's `stop_sequence`). */
  stopSequence?: string;
}

/**
 * `usage` may come more than once: providers that send running totals (Gemini) report each as it arrives,
 * so an answer abandoned mid-way is charged what the provider counted so far; the last one counts.
 */
export type StreamEvent =
  | { type: 'delta'; delta: ChunkDelta; finishReason: FinishReason | null; logprobs?: ChoiceLogprobs; meta?: UpstreamMeta; stopSequence?: string }
  | { type: 'usage'; usage: UpstreamTokens; meta?: UpstreamMeta };

/**
 * A streamed answer's events in the batches they arrived in: the events of one network read come as one
 * array, so each layer above (failover, the door) takes a read's worth in one step rather than an
 * asynchronous step per event. A batch is never empty.
 */
export type EventBatches = AsyncIterable<readonly StreamEvent[]>;

/**
 * What watches one attempt's answer (the request's observation: ../observability/request-observation.ts),
 * told of each read by the reader (../routing/failover.ts) rather than wrapped around the reads: a wrapper
 * cost every read of every request a promise and a closure. Each method after the attempt ended is a no-op.
 */
export interface AttemptWatch {
  /** A read gave `batch` after waiting `waitedMs` on the upstream; null: the answer ended there. */
  read(waitedMs: number, batch: readonly StreamEvent[] | null): void;
  /** A read failed after `waitedMs` (0 for an error of the reader's own finding, as the output bound). */
  failed(waitedMs: number, error: unknown): void;
  /** The attempt was closed under its answer (the request ended: client gone, shutdown). */
  closed(): void;
}

/** An attempt's events, with what watches them when the request is observed. */
export interface WatchedBatches extends EventBatches {
  readonly watch?: AttemptWatch;
}

/** Why an upstream call failed, in terms the failover logic can act on. */
export type UpstreamFailureKind =
  | 'connect' // connection refused / DNS / reset before a response
  | 'http' // a non-2xx status
  | 'timeout' // a deadline passed
  | 'protocol' // a malformed response or stream
  | 'unsupported' // this provider's protocol cannot express the request (another provider may)
  | 'aborted'; // our own signal fired (client gone)

export class UpstreamError extends Error {
  constructor(
    readonly kind: UpstreamFailureKind,
    message: string,
    /** HTTP status when kind is `http`. */
    readonly status: number | null = null,
    /**
     * True when another target (or a retry) may succeed: connect, timeout, 429, 5xx, and a malformed answer
     * (one provider's bug is not another's).
     */
    readonly retryable: boolean = kind !== 'aborted',
  ) {
    super(message);
    this.name = 'UpstreamError';
  }
}

/** The wire protocol an adapter speaks; decides, among others, how its attachments are billed (src/billing/media/). */
export type ProviderProtocol = 'openai-compatible' | 'anthropic' | 'gemini' | 'sandbox';

export interface ProviderAdapter {
  /** The provider's configured name, e.g. `openai`; used as `routed_provider`. */
  readonly name: string;
  readonly protocol: ProviderProtocol;
  /** Whether calls cost money: test-environment keys are only ever served by free (sandbox) providers. */
  readonly paid: boolean;
  complete(call: UpstreamCall): Promise<UpstreamCompletion>;
  /**
   * Starts a streaming call. Resolves once the upstream accepted the request (status 2xx), rejects with an
   * UpstreamError otherwise. Iterating yields the events in batches as they arrive; iteration throws
   * UpstreamError on a cut or malformed stream, after yielding what arrived before the fault. Breaking out
   * of the iteration releases the upstream connection.
   */
  stream(call: UpstreamCall): Promise<EventBatches>;
}
