/** The error event that ends an OpenAI-convention stream which did not finish (chat and legacy doors). */
import type { StreamFailure } from '../completions/stream-encoder.js';
import { encodeSseJson } from '../streaming/sse-encode.js';
import type { SvcMetadata } from './chat-types.js';

/** `data: {"error": {...}}`, with `svc` when no earlier event of the stream carried it. */
export function streamErrorEvent(failure: StreamFailure, svc: SvcMetadata | undefined): Uint8Array {
  return encodeSseJson({ error: { message: failure.message, type: 'server_error', param: null, code: failure.code }, ...(svc !== undefined ? { svc } : {}) });
}
