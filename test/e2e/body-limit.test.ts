import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, parseConfig } from '../../src/config/schema.js';
import { startTestGateway, type Seeded, type TestGateway } from '../helpers/gateway.js';

/** The body limit decides from Content-Length when there is one, and counts a chunked body while reading it. */
describe('request body limit', () => {
  let gw: TestGateway;
  let seeded: Seeded;
  const MAX = 2048;

  beforeAll(async () => {
    const cfg = structuredClone(DEFAULT_CONFIG) as { server?: unknown; providers: { sandbox: { pace: unknown } } };
    cfg.server = { max_body_bytes: MAX };
    cfg.providers.sandbox.pace = { time_to_first_token_ms: 0, tokens_per_second: 0 };
    gw = await startTestGateway({ config: parseConfig(cfg) });
    seeded = await gw.seed({ purchased: 100_000 });
  });
  afterAll(() => gw.close());

  const body = (contentBytes: number): string =>
    JSON.stringify({ model: 'svc-fast', max_tokens: 4, messages: [{ role: 'user', content: 'x'.repeat(contentBytes) }] });

  function post(payload: string, chunked: boolean): Promise<Response> {
    const bytes = new TextEncoder().encode(payload);
    const init: RequestInit & { duplex?: 'half' } = {
      method: 'POST',
      headers: { authorization: `Bearer ${seeded.secret}`, 'content-type': 'application/json' },
      body: chunked
        ? new ReadableStream<Uint8Array>({
            start(controller) {
              // Two chunks, so the size is known only once both are read.
              controller.enqueue(bytes.slice(0, 100));
              controller.enqueue(bytes.slice(100));
              controller.close();
            },
          })
        : bytes,
    };
    if (chunked) init.duplex = 'half';
    return fetch(`${gw.url}/chat/completions`, init);
  }

  for (const chunked of [false, true]) {
    const how = chunked ? 'chunked' : 'with Content-Length';
    it(`answers 413 to a body over the limit (${how})`, async () => {
      const res = await post(body(MAX), chunked);
      expect(res.status).toBe(413);
      expect((await res.json()).error.code).toBe('request_too_large');
    });

    it(`serves a body under the limit (${how})`, async () => {
      const res = await post(body(MAX - 200), chunked);
      expect(res.status).toBe(200);
      expect((await res.json()).choices[0].message.role).toBe('assistant');
    });
  }
});
