import { describe, expect, it } from 'vitest';
import { decodeSse } from '../../src/streaming/sse-decode.js';
import { encodeSseComment, encodeSseData, encodeSseDone, encodeSseJson } from '../../src/streaming/sse-encode.js';
import { webBody } from '../../src/providers/upstream-http.js';

const decoder = new TextDecoder();
const text = (bytes: Uint8Array): string => decoder.decode(bytes);

describe('SSE encode', () => {
  it('frames JSON on one data line, even with line breaks inside strings', () => {
    expect(text(encodeSseJson({ a: 'x\ny\r' }))).toBe('data: {"a":"x\\ny\\r"}\n\n');
  });

  it('frames [DONE] and keep-alive comments', () => {
    expect(text(encodeSseDone())).toBe('data: [DONE]\n\n');
    expect(text(encodeSseComment())).toBe(': keepalive\n\n');
    expect(text(encodeSseComment('a\nb'))).toBe(': a b\n\n');
  });

  it('hands out independent buffers for the fixed frames', () => {
    const a = encodeSseDone();
    a.fill(0);
    expect(text(encodeSseDone())).toBe('data: [DONE]\n\n');
  });

  it('round-trips through the decoder, multi-line data included', async () => {
    const parts = [encodeSseJson({ n: 1, s: 'é👋' }), encodeSseComment(), encodeSseData('line 1\nline 2\r\nline 3'), encodeSseDone()];
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
