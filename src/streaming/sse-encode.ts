/**
 * The only place that frames SSE output. Frames are built as text: a read's worth of an answer's frames is
 * joined and encoded to bytes once (`sseBytes`), where encoding each frame on its own and copying the
 * encodings together cost about five times as much a streamed answer (docs/performance.md, thirteenth
 * session).
 */

const encoder = new TextEncoder();

/** Response headers for an SSE body; `x-accel-buffering` stops nginx-style proxies from holding chunks back. */
export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  'x-accel-buffering': 'no',
};

/** `data: [DONE]\n\n`: the OpenAI-convention streams' last frame. */
export const SSE_DONE = 'data: [DONE]\n\n';

/** Text frames as the bytes written: a new buffer each time, so that no consumer can spoil another's. */
export function sseBytes(frames: string): Uint8Array {
  return encoder.encode(frames);
}

/**
 * `data: <json>\n\n`. JSON.stringify escapes CR and LF inside strings, so the payload is always one line and
 * needs no splitting into several `data:` lines.
 */
export function sseJson(value: object): string {
  return 'data: ' + JSON.stringify(value) + '\n\n';
}

/** `event: <name>\ndata: <json>\n\n`: the named events of Anthropic's stream (message_start, ...). */
export function sseEvent(name: string, value: object): string {
  return 'event: ' + name + '\ndata: ' + JSON.stringify(value) + '\n\n';
}

/** Frames an already serialized payload; one with line breaks becomes several `data:` lines, as SSE requires. */
export function sseData(data: string): string {
  if (data.indexOf('\n') === -1 && data.indexOf('\r') === -1) return 'data: ' + data + '\n\n';
  return 'data: ' + data.split(/\r\n|\r|\n/).join('\ndata: ') + '\n\n';
}

/** An SSE comment, ignored by clients; used as a keep-alive so idle proxies do not close the connection. */
export function sseComment(text = 'keepalive'): string {
  return ': ' + text.replace(/[\r\n]+/g, ' ') + '\n\n';
}
