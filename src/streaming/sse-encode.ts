/**
 * The only place that frames SSE output. Runs once per streamed chunk, so each call does one string
 * concatenation and one encode; the fixed frames are encoded once at load.
 */

const encoder = new TextEncoder();

/** Response headers for an SSE body; `x-accel-buffering` stops nginx-style proxies from holding chunks back. */
export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  'x-accel-buffering': 'no',
};

const DONE_FRAME = encoder.encode('data: [DONE]\n\n');
const KEEPALIVE_FRAME = encoder.encode(': keepalive\n\n');

/**
 * `data: <json>\n\n`. JSON.stringify escapes CR and LF inside strings, so the payload is always one line and
 * needs no splitting into several `data:` lines.
 */
export function encodeSseJson(value: object): Uint8Array {
  return encoder.encode('data: ' + JSON.stringify(value) + '\n\n');
}

/** `event: <name>\ndata: <json>\n\n`: the named events of Anthropic's stream (message_start, ...). */
export function encodeSseEvent(name: string, value: object): Uint8Array {
  return encoder.encode('event: ' + name + '\ndata: ' + JSON.stringify(value) + '\n\n');
}

/** Frames an already serialized payload; one with line breaks becomes several `data:` lines, as SSE requires. */
export function encodeSseData(data: string): Uint8Array {
  if (data.indexOf('\n') === -1 && data.indexOf('\r') === -1) return encoder.encode('data: ' + data + '\n\n');
  return encoder.encode('data: ' + data.split(/\r\n|\r|\n/).join('\ndata: ') + '\n\n');
}

/**
 * `data: [DONE]\n\n`. A fresh copy each time: a shared buffer handed to a stream could be transferred
 * (detached) by one consumer and then be empty for every other.
 */
export function encodeSseDone(): Uint8Array {
  return DONE_FRAME.slice();
}

/** An SSE comment, ignored by clients; used as a keep-alive so idle proxies do not close the connection. */
export function encodeSseComment(text = 'keepalive'): Uint8Array {
  if (text === 'keepalive') return KEEPALIVE_FRAME.slice();
  return encoder.encode(': ' + text.replace(/[\r\n]+/g, ' ') + '\n\n');
}
