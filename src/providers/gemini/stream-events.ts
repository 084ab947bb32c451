/**
 * A `streamGenerateContent?alt=sse` body -> StreamEvents. Each SSE event (CRLF-framed) is a whole
 * GenerateContentResponse holding the next piece of the answer; there is no `[DONE]`: the answer is complete
 * once a chunk carries a finishReason, and a body that ends before one is a cut. Usage comes as running
 * totals on the chunks (thinking tokens included): each new total is reported as it arrives, so an answer
 * cut or abandoned mid-way is charged the thinking the provider already billed, and the last one counts.
 */
import { UpstreamError, type StreamEvent, type UpstreamTokens } from '../contract.js';
import type { ChunkDelta } from '../../openai/chat-types.js';
import { SseDecodeError, decodeSseBatches } from '../../streaming/sse-decode.js';
import { cancelBodyOnEarlyReturn } from '../early-cancel.js';
import { abortedError, bodyReadFailure, protocolError } from '../upstream-failures.js';
import { readChunk, responseKey, toFinishReason, toToolCall } from './chunk-reading.js';
import type { UpstreamBody } from '../upstream-http.js';
import type { StopSignalLike } from '../../core/stop-signal.js';

/** The events of a stream body; abandoning them at any point cancels the body. */
export function cancellableEvents(
  body: UpstreamBody,
  signal: StopSignalLike,
): AsyncIterableIterator<readonly StreamEvent[]> {
  return cancelBodyOnEarlyReturn(body, answerEvents(sseChunks(body, signal), signal));
}

/**
 * Events of a sequence of batches of response chunks (one batch per network read of an SSE body, or the
 * JSON array Gemini sends when `alt=sse` is not honoured, as one batch): a batch of events per batch of
 * chunks that produced any. Leaving it early closes `chunks`, which cancels the body.
 */
export async function* answerEvents(
  chunks: AsyncIterable<readonly unknown[]> | Iterable<readonly unknown[]>,
  signal: StopSignalLike,
): AsyncGenerator<StreamEvent[], void, undefined> {
  const translator = new ChunkTranslator();
  let reported: UpstreamTokens | null = null;
  for await (const payloads of chunks) {
    const batch: StreamEvent[] = [];
    // A chunk may fail the answer (an error envelope, a block, a failed finish): what came before it in the
    // same read is still delivered first, as it would have been one chunk at a time.
    let fault: unknown = null;
    try {
      for (const payload of payloads) {
        const ev = translator.accept(payload);
        const usage = translator.usage;
        if (!translator.finished && usage !== null && (usage.promptTokens !== reported?.promptTokens || usage.completionTokens !== reported.completionTokens || usage.cachedTokens !== reported.cachedTokens)) {
          reported = usage;
          batch.push({ type: 'usage', usage });
        }
        if (ev !== null) batch.push(ev);
      }
    } catch (e) {
      fault = e;
    }
    if (batch.length > 0) yield batch;
    if (fault !== null) throw fault;
  }
  if (signal.aborted) throw abortedError(signal);
  if (!translator.finished) throw protocolError('upstream stream ended early (no chunk carried a finishReason)');
  if (translator.usage !== null) yield [{ type: 'usage', usage: translator.usage }];
}

/** The parsed chunks of each network read; a malformed one ends the iteration after those before it. */
async function* sseChunks(
  body: UpstreamBody,
  signal: StopSignalLike,
): AsyncGenerator<unknown[], void, undefined> {
  try {
    for await (const sse of decodeSseBatches(body, { signal })) {
      if (signal.aborted) return;
      const payloads: unknown[] = [];
      let fault: unknown = null;
      try {
        for (const { data } of sse) if (data.length > 0) payloads.push(parseChunk(data));
      } catch (e) {
        fault = e;
      }
      if (payloads.length > 0) yield payloads;
      if (fault !== null) throw fault;
    }
  } catch (err) {
    if (err instanceof UpstreamError) throw err;
    if (err instanceof SseDecodeError) throw protocolError(`upstream stream is not valid SSE: ${err.message}`);
    throw bodyReadFailure(err, signal);
  }
}

function parseChunk(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    throw protocolError(`upstream sent a malformed stream chunk: ${data.slice(0, 120)}`);
  }
}

/** Turns chunks into deltas, keeping what spans chunks: tool-call numbering, whether a call was made, usage. */
class ChunkTranslator {
  finished = false;
  usage: UpstreamTokens | null = null;
  private toolCalls = 0;
  private roleSent = false;
  private key: string | null = null;

  accept(payload: unknown): StreamEvent | null {
    const reading = readChunk(payload);
    if (reading.usage !== null) this.usage = reading.usage;
    // Anything after the finish (a trailing usage chunk) only updates the usage.
    if (this.finished || !reading.hasCandidate) return null;
    this.key ??= responseKey(reading.responseId);
    const delta: ChunkDelta = {};
    if (reading.reasoning.length > 0) delta.reasoning_content = reading.reasoning;
    if (reading.text.length > 0) delta.content = reading.text;
    if (reading.functionCalls.length > 0) {
      // Gemini sends each call whole, in one chunk: one delta per call carries all of it.
      delta.tool_calls = reading.functionCalls.map((call) => {
        const index = this.toolCalls++;
        return { index, ...toToolCall(call, this.key ?? '', index) };
      });
    }
    const raw = reading.finishReason;
    const finishReason = raw === null ? null : toFinishReason(raw, this.toolCalls > 0);
    if (finishReason !== null) this.finished = true;
    if (delta.content === undefined && delta.tool_calls === undefined && delta.reasoning_content === undefined && finishReason === null) {
      return null;
    }
    if (!this.roleSent) {
      this.roleSent = true;
      return { type: 'delta', delta: { role: 'assistant', ...delta }, finishReason };
    }
    return { type: 'delta', delta, finishReason };
  }
}
