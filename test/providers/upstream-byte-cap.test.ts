/**
 * The cap on upstream answer bytes, on the reply the adapters read: text(), iteration and cancellation. The
 * end-to-end proof with a real 100 MB upstream is test/e2e/upstream-limits.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../../src/providers/contract.js';
import { capBody, capReplyBytes } from '../../src/providers/upstream-byte-cap.js';
import { bodyText, httpOverFetch, webBody, type UpstreamBody, type UpstreamHttp, type UpstreamPost } from '../../src/providers/upstream-http.js';

/** An endless source of 1000-byte chunks that records how much was pulled and whether it was released. */
function endless(): { body: UpstreamBody; pulled: () => number; cancelled: () => boolean } {
  let pulled = 0;
  let cancelled = false;
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(c) {
        pulled += 1000;
        c.enqueue(new Uint8Array(1000).fill(65));
      },
      cancel() {
        cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
  return { body: webBody(stream), pulled: () => pulled, cancelled: () => cancelled };
}

describe('capBody', () => {
  it('errors the read with an UpstreamError past the cap, releases the source and reads no further', async () => {
    const src = endless();
    const err: unknown = await bodyText(capBody(src.body, 5_000)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamError);
    expect((err as UpstreamError).kind).toBe('protocol');
    expect((err as UpstreamError).retryable).toBe(true);
    expect((err as UpstreamError).message).toContain('max_upstream_response_bytes');
    expect(src.cancelled()).toBe(true);
    expect(src.pulled()).toBeLessThanOrEqual(6_000);
  });

  it('passes a body at the cap through whole', async () => {
    const bytes = new Uint8Array(5_000).fill(66);
    const text = await bodyText(capBody(webBody(new Response(bytes).body as ReadableStream<Uint8Array>), 5_000));
    expect(text).toBe('B'.repeat(5_000));
  });

  it('stopping early, or cancelling the capped body, releases the source', async () => {
    const first = endless();
    for await (const chunk of capBody(first.body, 1_000_000)) {
      expect(chunk.byteLength).toBe(1000);
      break;
    }
    expect(first.cancelled()).toBe(true);

    const second = endless();
    await capBody(second.body, 1_000_000).cancel();
    expect(second.cancelled()).toBe(true);
  });
});

describe('capReplyBytes', () => {
  it('asks the transport for the cap, the smaller of two when caps are stacked, and passes the rest of the post on', async () => {
    const seen: UpstreamPost[] = [];
    const transport: UpstreamHttp = async (_url, post) => {
      seen.push(post);
      return { status: 204, ok: true, headers: new Headers(), body: null, text: async () => '' };
    };
    const signal = new AbortController().signal;
    await capReplyBytes(transport, 2_500)('http://upstream.invalid/', { headers: { a: 'b' }, body: '{}', signal });
    await capReplyBytes(capReplyBytes(transport, 2_500), 9_000)('http://upstream.invalid/', { headers: {}, body: '{}', signal });
    await capReplyBytes(capReplyBytes(transport, 9_000), 2_000)('http://upstream.invalid/', { headers: {}, body: '{}', signal });
    expect(seen.map((p) => p.maxBytes)).toEqual([2_500, 2_500, 2_000]);
    expect(seen[0]).toMatchObject({ headers: { a: 'b' }, body: '{}', signal });
  });
});

describe('httpOverFetch with a cap', () => {
  /** A fetch whose answer is `src`'s endless body, with the status and headers given. */
  function fetchOf(src: { stream: ReadableStream<Uint8Array> }, status: number, headers: Headers): typeof fetch {
    return async () => new Response(src.stream, { status, headers });
  }

  function endlessStream(): { stream: ReadableStream<Uint8Array>; cancelled: () => boolean } {
    let cancelled = false;
    const stream = new ReadableStream<Uint8Array>(
      {
        pull(c) {
          c.enqueue(new Uint8Array(1000).fill(65));
        },
        cancel() {
          cancelled = true;
        },
      },
      { highWaterMark: 0 },
    );
    return { stream, cancelled: () => cancelled };
  }

  it('keeps status and headers and caps the body', async () => {
    const src = endlessStream();
    const headers = new Headers({ 'content-type': 'text/event-stream', 'x-a': 'b' });
    const capped = capReplyBytes(httpOverFetch(fetchOf(src, 503, headers)), 2_500);
    const res = await capped('http://upstream.invalid/', { headers: {}, body: '{}', signal: new AbortController().signal });
    expect(res.status).toBe(503);
    expect(res.ok).toBe(false);
    expect(res.headers.get('x-a')).toBe('b');
    const chunks: number[] = [];
    const read = async (): Promise<void> => {
      for await (const chunk of res.body as UpstreamBody) chunks.push(chunk.byteLength);
    };
    await expect(read()).rejects.toBeInstanceOf(UpstreamError);
    expect(chunks).toEqual([1000, 1000]);
    expect(src.cancelled()).toBe(true);
  });

  it('caps text() too', async () => {
    const src = endlessStream();
    const capped = capReplyBytes(httpOverFetch(fetchOf(src, 200, new Headers())), 2_500);
    const res = await capped('http://upstream.invalid/', { headers: {}, body: '{}', signal: new AbortController().signal });
    await expect(res.text()).rejects.toBeInstanceOf(UpstreamError);
    expect(src.cancelled()).toBe(true);
  });

  it('leaves a reply without a body alone', async () => {
    const capped = capReplyBytes(httpOverFetch(async () => new Response(null, { status: 204 })), 10);
    expect((await capped('http://upstream.invalid/', { headers: {}, body: '{}', signal: new AbortController().signal })).body).toBeNull();
  });
});
