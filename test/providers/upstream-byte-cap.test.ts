/**
 * The cap on upstream answer bytes, on the Response the adapters read: text(), a stream reader and
 * cancellation. The end-to-end proof with a real 100 MB upstream is test/e2e/upstream-limits.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../../src/providers/contract.js';
import { capBody, capResponseBytes } from '../../src/providers/upstream-byte-cap.js';

/** An endless source of 1000-byte chunks that records how much was pulled and whether it was cancelled. */
function endless(): { body: ReadableStream<Uint8Array>; pulled: () => number; cancelled: () => boolean } {
  let pulled = 0;
  let cancelled = false;
  const body = new ReadableStream<Uint8Array>(
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
  return { body, pulled: () => pulled, cancelled: () => cancelled };
}

describe('capBody', () => {
  it('errors text() with an UpstreamError past the cap, cancels the source and reads no further', async () => {
    const src = endless();
    const err: unknown = await new Response(capBody(src.body, 5_000)).text().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamError);
    expect((err as UpstreamError).kind).toBe('protocol');
    expect((err as UpstreamError).retryable).toBe(true);
    expect((err as UpstreamError).message).toContain('max_upstream_response_bytes');
    expect(src.cancelled()).toBe(true);
    expect(src.pulled()).toBeLessThanOrEqual(6_000);
  });

  it('passes a body at the cap through whole', async () => {
    const bytes = new Uint8Array(5_000).fill(66);
    const text = await new Response(capBody(new Response(bytes).body as ReadableStream<Uint8Array>, 5_000)).text();
    expect(text).toBe('B'.repeat(5_000));
  });

  it('cancelling the capped body cancels the source', async () => {
    const src = endless();
    const reader = capBody(src.body, 1_000_000).getReader();
    await reader.read();
    await reader.cancel();
    expect(src.cancelled()).toBe(true);
  });
});

describe('capResponseBytes', () => {
  it('keeps status and headers and caps the body', async () => {
    const src = endless();
    const capped = capResponseBytes(
      async () => new Response(src.body, { status: 503, headers: { 'content-type': 'text/event-stream', 'x-a': 'b' } }),
      2_500,
    );
    const res = await capped('http://upstream.invalid/');
    expect(res.status).toBe(503);
    expect(res.headers.get('x-a')).toBe('b');
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    await reader.read();
    await expect(reader.read()).rejects.toBeInstanceOf(UpstreamError);
    expect(src.cancelled()).toBe(true);
  });

  it('leaves a response without a body alone', async () => {
    const capped = capResponseBytes(async () => new Response(null, { status: 204 }), 10);
    expect((await capped('http://upstream.invalid/')).body).toBeNull();
  });
});
