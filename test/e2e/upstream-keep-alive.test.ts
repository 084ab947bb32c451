/**
 * A finished answer leaves its upstream connection in the keep-alive pool: every completion opening a new
 * upstream connection would cost a TCP (and, against a real provider, a TLS) handshake each. The adapter's
 * event reader (src/providers/openai-compatible/event-stream.ts) and the Node transport
 * (src/runtime/node/upstream-client.ts) stop reading at `[DONE]`; what they close then must not be the
 * connection of an answer that has ended. A real HTTP upstream counts the connections it accepts while the
 * real gateway serves completions one after the other, streamed and not, from an upstream whose body ends
 * a moment after its `[DONE]` (or Anthropic's `message_stop`); and a cut stream (no [DONE], no finish) does
 * close its connection.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/schema.js';
import { chat, startTestGateway, type Seeded, type TestGateway } from '../helpers/gateway.js';
import { sleep, sseChunk } from '../helpers/openai-sse.js';

const ANTHROPIC_STREAM = readFileSync(new URL('../fixtures/anthropic/stream-text.sse', import.meta.url), 'utf8');

let upstream: Server;
let connections = 0;
let closedConnections = 0;
/** What the next answer is: a whole stream, or one cut after its first chunk. */
let answer: 'whole' | 'cut' | 'never-ends' = 'whole';
/** Settles once the upstream has sent the last byte of its latest answer. */
let answerSent: Promise<void> = Promise.resolve();
let gw: TestGateway;
let seeded: Seeded;

beforeAll(async () => {
  upstream = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      answerSent = new Promise((resolve) => {
        res.once('finish', () => resolve());
        res.once('close', () => resolve());
      });
      if (req.url?.endsWith('/messages') === true) {
        // Anthropic's stream, whole at message_stop; its body's end comes a moment later.
        res.write(ANTHROPIC_STREAM);
        setTimeout(() => res.end(), 20);
        return;
      }
      if (answer === 'cut') {
        res.write(sseChunk({ role: 'assistant', content: 'Half' }));
        // Ends the connection mid-answer: no finish_reason, no [DONE].
        setTimeout(() => res.socket?.destroy(), 5);
        return;
      }
      res.write(sseChunk({ role: 'assistant', content: 'Hello' }));
      res.write(sseChunk({ content: ' there' }));
      res.write(sseChunk({}, 'stop'));
      res.write(sseChunk({}, null, { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 }));
      // The body's end comes in a later packet than [DONE], as it can from a real server or proxy.
      res.write('data: [DONE]\n\n');
      if (answer === 'never-ends') return;
      setTimeout(() => res.end(), 20);
    });
  });
  upstream.on('connection', (socket) => {
    connections += 1;
    socket.on('close', () => (closedConnections += 1));
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
  const targets = [{ provider: 'local', model: 'm-local' }];
  gw = await startTestGateway({
    config: parseConfig({
      health: { failure_threshold: 1_000 },
      providers: {
        local: { type: 'openai-compatible', base_url: url, paid: false },
        claude: { type: 'anthropic', base_url: url, api_version: '2023-06-01', paid: false },
      },
      aliases: { 'svc-fast': { targets }, 'svc-code': { targets }, 'svc-smart': { targets: [{ provider: 'claude', model: 'claude-x' }] } },
    }),
  });
  seeded = await gw.seed({ purchased: 1_000_000 });
});

afterAll(async () => {
  await gw.close();
  upstream.closeAllConnections();
  await new Promise((resolve) => upstream.close(resolve));
});

const request = (stream: boolean) => ({ model: 'svc-fast', stream, max_tokens: 16, messages: [{ role: 'user', content: 'Say hello.' }] });

describe('upstream connections', () => {
  it('are reused from one finished completion to the next, streamed or not', async () => {
    answer = 'whole';
    const before = connections;
    for (let i = 0; i < 6; i++) {
      const res = await chat(gw, seeded.secret, request(i % 2 === 1));
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).toContain('Hello');
      // The answer is whole at [DONE]; the connection is free again once the body's end has been read.
      await answerSent;
      await sleep(30);
    }
    expect(connections - before).toBe(1);
  });

  it('are reused after an Anthropic stream, whole at its message_stop', async () => {
    const before = connections;
    for (let i = 0; i < 4; i++) {
      const res = await chat(gw, seeded.secret, { ...request(i % 2 === 1), model: 'svc-smart' });
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('Hello');
      await answerSent;
      await sleep(30);
    }
    // At most one new connection (the pool may hold an idle one from the cases above), where closing at
    // message_stop opened one per completion.
    expect(connections - before).toBeLessThanOrEqual(1);
  });

  it('are closed when a body never ends after its [DONE], without holding the answer back', async () => {
    answer = 'never-ends';
    const closedBefore = closedConnections;
    const started = performance.now();
    const res = await chat(gw, seeded.secret, request(false));
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('Hello');
    expect(performance.now() - started).toBeLessThan(1_000);
    // The tail is read for at most 1 s (src/runtime/node/upstream-client.ts, RELEASE_TAIL_MS), then closed.
    const deadline = performance.now() + 5_000;
    while (closedConnections === closedBefore && performance.now() < deadline) await sleep(50);
    expect(closedConnections).toBeGreaterThan(closedBefore);
  });

  it('are closed when an answer is cut', async () => {
    answer = 'cut';
    const closedBefore = closedConnections;
    const res = await chat(gw, seeded.secret, request(false));
    // The only target cut the answer before any finish: an upstream failure for the client.
    expect(res.status).toBeGreaterThanOrEqual(500);
    await res.text();
    await sleep(30);
    expect(closedConnections).toBeGreaterThan(closedBefore);

    answer = 'whole';
    const next = await chat(gw, seeded.secret, request(true));
    expect(next.status).toBe(200);
    expect(await next.text()).toContain('Hello');
  });
});
