import { describe, expect, it } from 'vitest';
import { decodeSse } from '../../src/streaming/sse-decode.js';
import { SSE_DONE, sseBytes, sseComment, sseData, sseEvent, sseJson } from '../../src/streaming/sse-encode.js';
import { webBody } from '../../src/providers/upstream-http.js';

describe('SSE encode', () => {
  it('frames JSON on one data line, even with line breaks inside strings', () => {
    expect(sseJson({ a: 'x\ny\r' })).toBe('data: {"a":"x\\ny\\r"}\n\n');
    expect(sseEvent('message_stop', { type: 'message_stop' })).toBe('event: message_stop\ndata: {"type":"message_stop"}\n\n');
  });

  it('frames [DONE] and keep-alive comments', () => {
    expect(SSE_DONE).toBe('data: [DONE]\n\n');
    expect(sseComment()).toBe(': keepalive\n\n');
    expect(sseComment('a\nb')).toBe(': a b\n\n');
  });

  it('hands out a new buffer each time, so one consumer cannot spoil another', () => {
    const a = sseBytes(SSE_DONE);
    a.fill(0);
    expect(new TextDecoder().decode(sseBytes(SSE_DONE))).toBe('data: [DONE]\n\n');
  });

  it('round-trips through the decoder, multi-line data and frames joined before encoding included', async () => {
    const parts = [sseBytes(sseJson({ n: 1, s: 'é👋' }) + sseComment()), sseBytes(sseData('line 1\nline 2\r\nline 3') + SSE_DONE)];
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const p of parts) controller.enqueue(p);
        controller.close();
      },
    });
    const data: string[] = [];
    for await (const e of decodeSse(webBody(body))) data.push(e.data);
    expect(data).toEqual(['{"n":1,"s":"é👋"}', 'line 1\nline 2\nline 3', '[DONE]']);
  });
});
