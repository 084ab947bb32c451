/**
 * How an OpenAI-convention stream ends (the chat and legacy-completions doors), one rule for both: the
 * event with the finish reason carries `svc`; with `include_usage` the usage event follows, last, and
 * carries it instead; an answer that did not finish ends with an error event, which carries `svc` when no
 * event above did; then `data: [DONE]` (written by the stream itself).
 */
import type { Settlement } from '../completions/completion.js';
import type { Finishing, StreamFailure } from '../completions/stream-encoder.js';
import { encodeSseJson } from '../streaming/sse-encode.js';
import type { SvcMetadata } from './chat-types.js';

/** `data: {"error": {...}}`, with `svc` when no earlier event of the stream carried it. */
export function streamErrorEvent(failure: StreamFailure, svc: SvcMetadata | undefined): Uint8Array {
  return encodeSseJson({ error: { message: failure.message, type: 'server_error', param: null, code: failure.code }, ...(svc !== undefined ? { svc } : {}) });
}

export interface ClosingFrames {
  /** The event with the finish reason (`svc` set when it carries it). */
  finishEvent(last: Finishing, svc: SvcMetadata | undefined): Uint8Array;
  /** The usage event of `include_usage`, with `svc`. */
  usageEvent(s: Settlement, svc: SvcMetadata): Uint8Array;
}

export function closingFrames(
  frames: ClosingFrames,
  withUsage: boolean,
  finishing: Finishing | null,
  s: Settlement,
  svc: SvcMetadata,
  failure: StreamFailure | null,
): Uint8Array[] {
  const out: Uint8Array[] = [];
  const usage = withUsage && s.ending === 'completed';
  // An answer that ended without a finish reason from its upstream finished all the same: `stop`, as the
  // non-streaming answer says.
  const last = finishing ?? (s.ending === 'completed' ? { delta: {}, finish: 'stop' as const } : null);
  if (last !== null) out.push(frames.finishEvent(last, usage ? undefined : svc));
  if (usage) out.push(frames.usageEvent(s, svc));
  if (failure !== null) out.push(streamErrorEvent(failure, last === null ? svc : undefined));
  return out;
}
