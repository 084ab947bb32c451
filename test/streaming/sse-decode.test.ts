import { describe, expect, it } from 'vitest';
import { PassThrough } from 'node:stream';
import { webBody, type UpstreamBody } from '../../src/providers/upstream-http.js';
import { SseDecodeError, decodeSse, decodeSseBatches, type SseEvent } from '../../src/streaming/sse-decode.js';

const encoder = new TextEncoder();

/** Events covering multi-line data, event names, ids, comments and multi-byte UTF-8 (2, 3 and 4 bytes). */
const SAMPLE = [
  ': opening comment',
  'data: {"content":"café"}',
  '',
  'event: delta',
  'id: 7',
  'data: first line',
  'data: second line',
  '',
  ': keepalive',
  '',
  'data: 日本語 and 👋',
  '',
  'data:no-space',
  '',
  'data: [DONE]',
  '',
  '',
].join('\n');

const EXPECTED: SseEvent[] = [
  { data: '{"content":"café"}', event: undefined, id: undefined },
  { data: 'first line\nsecond line', event: 'delta', id: '7' },
  { data: '日本語 and 👋', event: undefined, id: undefined },
  { data: 'no-space', event: undefined, id: undefined },
  { data: '[DONE]', event: undefined, id: undefined },
];

function streamOf(chunks: Uint8Array[], onCancel?: () => void): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = chunks[i++];
      if (chunk) controller.enqueue(chunk);
      else controller.close();
    },
    cancel() {
      onCancel?.();
    },
  });
}

/** A Node stream as an upstream body, as the Node transport hands undici's over. */
function nodeBody(source: PassThrough): UpstreamBody {
  return {
    [Symbol.asyncIterator]: () => source[Symbol.asyncIterator]() as AsyncIterator<Uint8Array>,
    cancel: async () => {
      source.destroy();
    },
  };
}

function splitAt(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    out.push(bytes.subarray(from, cut));
    from = cut;
  }
  return out;
}

async function collect(body: ReadableStream<Uint8Array>, onComment?: (t: string) => void): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  for await (const e of decodeSse(webBody(body), onComment ? { onComment } : {})) events.push(e);
  return events;
}

describe('decodeSse', () => {
  for (const [name, eol] of [
    ['LF', '\n'],
    ['CRLF', '\r\n'],
    ['CR', '\r'],
  ] as const) {
    it(`decodes ${name} line endings split at every byte boundary`, async () => {
      const bytes = encoder.encode(SAMPLE.replace(/\n/g, eol));
      for (let cut = 0; cut <= bytes.length; cut++) {
        expect(await collect(streamOf(splitAt(bytes, [cut])))).toEqual(EXPECTED);
      }
    });
  }

  it('decodes any three-way split, including inside multi-byte characters and CRLF pairs', async () => {
    const bytes = encoder.encode(SAMPLE.replace(/\n/g, '\r\n'));
    for (let a = 0; a <= bytes.length; a += 3) {
      for (let b = a; b <= bytes.length; b += 5) {
        expect(await collect(streamOf(splitAt(bytes, [a, b])))).toEqual(EXPECTED);
      }
    }
  });

  it('decodes one byte at a time', async () => {
    const bytes = encoder.encode(SAMPLE);
    const chunks = Array.from(bytes, (_, i) => bytes.subarray(i, i + 1));
    expect(await collect(streamOf(chunks))).toEqual(EXPECTED);
  });

  it('reports comments and does not turn them into events', async () => {
    const comments: string[] = [];
    await collect(streamOf([encoder.encode(SAMPLE)]), (c) => comments.push(c));
    expect(comments).toEqual(['opening comment', 'keepalive']);
  });

  it('drops an event whose terminating blank line never came', async () => {
    const events = await collect(streamOf([encoder.encode('data: a\n\ndata: unfinished\n')]));
    expect(events.map((e) => e.data)).toEqual(['a']);
  });

  it('strips a leading byte-order mark', async () => {
    const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...encoder.encode('data: x\n\n')]);
    expect((await collect(streamOf([bytes.subarray(0, 2), bytes.subarray(2)]))).map((e) => e.data)).toEqual(['x']);
  });

  it('cancels the body when the consumer stops early', async () => {
    let cancelled = false;
    const body = streamOf([encoder.encode('data: 1\n\ndata: 2\n\n'), encoder.encode('data: 3\n\n')], () => {
      cancelled = true;
    });
    for await (const e of decodeSse(webBody(body))) {
      expect(e.data).toBe('1');
      break;
    }
    expect(cancelled).toBe(true);
  });

  it('ends without error and cancels the body when the signal fires', async () => {
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(encoder.encode('data: 1\n\n'));
      },
      cancel() {
        cancelled = true;
      },
    });
    const controller = new AbortController();
    const seen: string[] = [];
    for await (const e of decodeSse(webBody(body), { signal: controller.signal })) {
      seen.push(e.data);
      setTimeout(() => controller.abort(), 5);
    }
    expect(seen).toEqual(['1']);
    expect(cancelled).toBe(true);
  });

  it('over a Node stream body (the Node transport\'s): stops on the signal without error and destroys the stream', async () => {
    const source = new PassThrough();
    source.write(encoder.encode('data: 1\n\n'));
    const body = nodeBody(source);
    const controller = new AbortController();
    const seen: string[] = [];
    for await (const e of decodeSse(body, { signal: controller.signal })) {
      seen.push(e.data);
      setTimeout(() => controller.abort(), 5);
    }
    expect(seen).toEqual(['1']);
    expect(source.destroyed).toBe(true);
  });

  it('over a Node stream body: stopping early destroys the stream', async () => {
    const source = new PassThrough();
    source.write(encoder.encode('data: 1\n\ndata: 2\n\n'));
    const body = nodeBody(source);
    for await (const e of decodeSse(body)) {
      expect(e.data).toBe('1');
      break;
    }
    expect(source.destroyed).toBe(true);
  });

  it('refuses an event larger than maxBufferSize', async () => {
    const big = streamOf([encoder.encode('data: ' + 'x'.repeat(200)), encoder.encode('x'.repeat(200))]);
    const iterate = async (): Promise<void> => {
      for await (const e of decodeSse(webBody(big), { maxBufferSize: 100 })) void e;
    };
    await expect(iterate()).rejects.toBeInstanceOf(SseDecodeError);
  });
});

describe('decodeSseBatches', () => {
  it('gives the events each network read completed as one batch, and no empty batch', async () => {
    const bytes = encoder.encode(SAMPLE);
    // Read 1 ends inside the second event, read 2 inside a comment, read 3 holds the rest.
    const second = SAMPLE.indexOf('data: second');
    const keepalive = SAMPLE.indexOf('keepalive');
    const cuts = [encoder.encode(SAMPLE.slice(0, second)).length, encoder.encode(SAMPLE.slice(0, keepalive)).length];
    const batches: (readonly SseEvent[])[] = [];
    for await (const batch of decodeSseBatches(webBody(streamOf(splitAt(bytes, cuts))))) batches.push(batch);
    expect(batches).toEqual([EXPECTED.slice(0, 1), EXPECTED.slice(1, 2), EXPECTED.slice(2)]);

    const whole: (readonly SseEvent[])[] = [];
    for await (const batch of decodeSseBatches(webBody(streamOf([bytes])))) whole.push(batch);
    expect(whole).toEqual([EXPECTED]);
  });
});
