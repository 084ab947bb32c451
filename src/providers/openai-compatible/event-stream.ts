/**
 * An upstream SSE body -> StreamEvents, with the end-of-stream rules: `data: [DONE]` ends it; a body that
 * ends after a finish_reason but without [DONE] is accepted (several compatible servers omit it); a body
 * that ends before either is a cut.
 */
import { UpstreamError, type StreamEvent } from '../contract.js';
import { SseDecodeError, decodeSseBatches } from '../../streaming/sse-decode.js';
import { cancelBodyOnEarlyReturn } from '../early-cancel.js';
import { abortedError, bodyReadFailure, isRecord, protocolError } from '../upstream-failures.js';
import { payloadError } from './upstream-errors.js';
import { chunkEvents } from './wire-parse.js';
import type { UpstreamBody } from '../upstream-http.js';

/**
 * One batch per network read: the events of every chunk that read completed. A fault in the middle of a read
 * (a malformed chunk, an error payload) ends the iteration after the events before it are yielded.
 * Leaving this generator early, by any path, closes the SSE decoder, which cancels the body.
 */
export async function* readChatStream(
  body: UpstreamBody,
  signal: AbortSignal,
): AsyncGenerator<StreamEvent[], void, undefined> {
  let finished = false;
  try {
    for await (const sse of decodeSseBatches(body, { signal })) {
      if (signal.aborted) break;
      const batch: StreamEvent[] = [];
      let done = false;
      let fault: unknown = null;
      try {
        for (const { data, event } of sse) {
          if (data === '[DONE]') {
            done = true;
            break;
          }
          if (data.length === 0) continue;
          const payload = parseChunk(data);
          if (event === 'error' && isRecord(payload)) throw payloadError(payload);
          chunkEvents(payload, batch);
        }
      } catch (e) {
        fault = e;
      }
      for (const ev of batch) if (ev.type === 'delta' && ev.finishReason !== null) finished = true;
      if (batch.length > 0) yield batch;
      if (fault !== null) throw fault;
      if (done) return;
    }
  } catch (err) {
    if (err instanceof UpstreamError) throw err;
    if (err instanceof SseDecodeError) throw protocolError(`upstream stream is not valid SSE: ${err.message}`);
    throw bodyReadFailure(err, signal);
  }
  if (signal.aborted) throw abortedError(signal);
  if (!finished) throw protocolError('upstream stream ended early (no finish_reason and no [DONE])');
}

function parseChunk(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    throw protocolError(`upstream sent a malformed stream chunk: ${data.slice(0, 120)}`);
  }
}

/** The events of an SSE body; abandoning them at any point cancels the body. */
export function cancellableEvents(
  body: UpstreamBody,
  signal: AbortSignal,
): AsyncIterableIterator<readonly StreamEvent[]> {
  return cancelBodyOnEarlyReturn(body, readChatStream(body, signal));
}
