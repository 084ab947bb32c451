import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ProviderAdapter, StreamEvent } from '../../src/providers/contract.js';
import { createOpenAICompatibleAdapter } from '../../src/providers/openai-compatible/adapter.js';
import type { SandboxFault } from '../../src/providers/sandbox/faults.js';
import { simulateCompletion } from '../../src/providers/sandbox/simulator.js';
import { startSandboxServer, type SandboxServer } from '../../src/runtime/node/sandbox-server.js';
import { chatRequest, collect, collectUntilFailure, eachEvent, finishReasons, text, upstreamCall, upstreamFailure, usages } from './helpers/calls.js';
import { within } from './helpers/fixture-server.js';

let sandbox: SandboxServer;
let client: ProviderAdapter;

beforeAll(async () => {
  sandbox = await startSandboxServer({ pace: { timeToFirstTokenMs: 0, tokensPerSecond: 0 } });
  client = createOpenAICompatibleAdapter({ name: 'sandbox-http', baseUrl: sandbox.url, apiKey: null, paid: false });
});

afterEach(() => sandbox.setFault(null));

afterAll(async () => {
  await sandbox.close();
});

const root = (): string => sandbox.url.replace(/\/v1$/, '');

function post(body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${sandbox.url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** The adapter pointed at the sandbox with a per-request fault header. */
function clientWith(fault: SandboxFault | SandboxFault[]): ProviderAdapter {
  return createOpenAICompatibleAdapter({
    name: 'sandbox-http',
    baseUrl: sandbox.url,
    apiKey: null,
    paid: false,
    extraHeaders: { 'x-sandbox-fault': JSON.stringify(fault) },
  });
}

const contentTokens = (events: StreamEvent[]): number =>
  events.filter((e) => e.type === 'delta' && typeof e.delta.content === 'string' && e.delta.content.length > 0).length;

async function eventually(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 2000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('sandbox server: protocol', () => {
  it('serves the simulated answer end to end through the OpenAI-compatible adapter', async () => {
    const call = upstreamCall('sandbox-fast');
    const sim = simulateCompletion(call.request, 'sandbox-fast');
    const events = await collect(await client.stream(call));
    expect(text(events)).toBe(sim.message.content);
    expect(finishReasons(events)).toEqual([sim.finishReason]);
    // The server writes OpenAI's usage details, zero: the sandbox neither caches prompts nor reasons.
    const usage = { ...sim.usage, cachedTokens: 0, reasoningTokens: 0 };
    expect(usages(events)).toEqual([usage]);
    const completion = await client.complete(call);
    expect(completion).toEqual({
      message: sim.message,
      finishReason: sim.finishReason,
      usage,
      model: 'sandbox-fast',
      // `logprobs: null`, `service_tier` and `system_fingerprint` as the server writes them (wire-format.ts).
      logprobs: null,
      meta: { systemFingerprint: 'fp_sandbox', serviceTier: 'default', model: 'sandbox-fast' },
    });
  });

  it("writes OpenAI's chunk format, with usage only when asked, and [DONE]", async () => {
    const request = { model: 'sandbox-code', messages: [{ role: 'user', content: 'hi' }], stream: true, max_tokens: 3 };
    const plain = await (await post(request)).text();
    const frames = plain.trim().split('\n\n');
    expect(frames.at(-1)).toBe('data: [DONE]');
    const chunks = frames.slice(0, -1).map((f) => JSON.parse(f.replace(/^data: /, '')) as Record<string, unknown>);
    expect(chunks).toHaveLength(5);
    for (const c of chunks) {
      expect(c).toMatchObject({ object: 'chat.completion.chunk', model: 'sandbox-code', id: chunks[0]?.id });
      expect(c).not.toHaveProperty('usage');
    }
    expect(chunks.at(-1)).toMatchObject({ choices: [{ index: 0, delta: {}, finish_reason: 'length' }] });

    const withUsage = await (await post({ ...request, stream_options: { include_usage: true } })).text();
    const last = JSON.parse(withUsage.trim().split('\n\n').at(-2)?.replace(/^data: /, '') ?? '{}') as Record<string, unknown>;
    expect(last).toMatchObject({ choices: [], usage: { completion_tokens: 3, total_tokens: expect.any(Number) as unknown } });
  });

  it('answers bad input with the OpenAI error envelope', async () => {
    const bad = await post({ model: 'm', messages: [{ role: 'robot', content: 'x' }] });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({
      error: { message: expect.stringContaining('messages[0].role') as unknown, type: 'invalid_request_error', param: 'messages[0].role', code: null },
    });
    expect((await post('{not json')).status).toBe(400);
    expect((await post({ model: 'm', messages: [] })).status).toBe(400);
    const badFault = await post({ model: 'm', messages: [{ role: 'user', content: 'x' }] }, { 'x-sandbox-fault': '{"type":"nope"}' });
    expect(badFault.status).toBe(400);
  });

  it('lists models', async () => {
    const body = (await (await fetch(`${sandbox.url}/models`)).json()) as { object: string; data: { id: string }[] };
    expect(body.object).toBe('list');
    expect(body.data.map((m) => m.id)).toContain('sandbox-fast');
  });

  it('counts chat requests at /_sandbox/stats', async () => {
    await fetch(`${root()}/_sandbox/stats`, { method: 'DELETE' });
    await client.complete(upstreamCall('m'));
    await collect(await client.stream(upstreamCall('m')));
    expect(await (await fetch(`${root()}/_sandbox/stats`)).json()).toEqual({ requests: 2, inFlight: 0 });
    expect(sandbox.stats().requests).toBe(2);
  });
});

describe('sandbox server: faults', () => {
  it('flips a server-wide status fault on and off over HTTP, honouring `after`', async () => {
    const put = await fetch(`${root()}/_sandbox/faults`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'status', status: 503, after: 1 }),
    });
    expect(put.status).toBe(200);
    await client.complete(upstreamCall('m'));
    const err = await upstreamFailure(client.stream(upstreamCall('m')));
    expect(err).toMatchObject({ kind: 'http', status: 503, retryable: true });
    expect(err.message).toContain('overloaded');
    await upstreamFailure(client.complete(upstreamCall('m')));
    expect((await fetch(`${root()}/_sandbox/faults`, { method: 'DELETE' })).status).toBe(200);
    await client.complete(upstreamCall('m'));
    const invalid = await fetch(`${root()}/_sandbox/faults`, { method: 'PUT', body: '{"type":"status","status":200}' });
    expect(invalid.status).toBe(400);
  });

  it('sends 429 with Retry-After and an envelope', async () => {
    sandbox.setFault({ type: 'status', status: 429, retryAfterSeconds: 7 });
    const res = await post({ model: 'm', messages: [{ role: 'user', content: 'x' }] });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('7');
    expect(await res.json()).toMatchObject({ error: { type: 'requests', code: 'rate_limit_exceeded' } });
    expect(await upstreamFailure(client.complete(upstreamCall('m')))).toMatchObject({ status: 429, retryable: true });
  });

  it('stall_before_first_token: sends headers, then nothing until the client gives up', async () => {
    const events = await clientWith({ type: 'stall_before_first_token' }).stream(upstreamCall('m', {}, AbortSignal.timeout(150)));
    const { seen, error } = await collectUntilFailure(events);
    expect(seen).toEqual([]);
    expect(error).toMatchObject({ kind: 'timeout' });
    await eventually(() => sandbox.stats().inFlight === 0, 'the stalled request to end');
  });

  it('stall_before_first_token with headers:false: the response itself never comes', async () => {
    const started = clientWith({ type: 'stall_before_first_token', headers: false }).stream(upstreamCall('m', {}, AbortSignal.timeout(150)));
    expect(await upstreamFailure(started)).toMatchObject({ kind: 'timeout' });
    const completion = clientWith({ type: 'stall_after_tokens', tokens: 1 }).complete(upstreamCall('m', {}, AbortSignal.timeout(100)));
    expect(await upstreamFailure(completion)).toMatchObject({ kind: 'timeout' });
    await eventually(() => sandbox.stats().inFlight === 0, 'the stalled requests to end');
  });

  it('slow_first_token delays the first token only', async () => {
    const start = performance.now();
    let first = 0;
    for await (const e of eachEvent(await clientWith({ type: 'slow_first_token', ms: 150 }).stream(upstreamCall('m')))) {
      if (first === 0 && e.type === 'delta') first = performance.now() - start;
    }
    expect(first).toBeGreaterThanOrEqual(140);
    expect(performance.now() - start).toBeLessThan(600);
  });

  it('pace overrides set the token rate', async () => {
    const start = performance.now();
    await collect(await clientWith({ type: 'pace', tokensPerSecond: 100 }).stream(upstreamCall('m', { max_tokens: 11 })));
    const elapsed = performance.now() - start;
    expect(elapsed).toBeGreaterThanOrEqual(95);
    expect(elapsed).toBeLessThan(500);
  });

  it('stall_after_tokens: N tokens, then silence until the client gives up', async () => {
    const events = await clientWith({ type: 'stall_after_tokens', tokens: 3 }).stream(upstreamCall('m', {}, AbortSignal.timeout(150)));
    const { seen, error } = await collectUntilFailure(events);
    expect(contentTokens(seen)).toBe(3);
    expect(error).toMatchObject({ kind: 'timeout' });
  });

  it('cut_after_tokens: N tokens, then the body ends without finish or [DONE]', async () => {
    const { seen, error } = await collectUntilFailure(await clientWith({ type: 'cut_after_tokens', tokens: 4 }).stream(upstreamCall('m')));
    expect(contentTokens(seen)).toBe(4);
    expect(error).toMatchObject({ kind: 'protocol', message: expect.stringContaining('ended early') as unknown });
    const cutJson = clientWith({ type: 'cut_after_tokens', tokens: 4 }).complete(upstreamCall('m'));
    expect(await upstreamFailure(cutJson)).toMatchObject({ kind: 'protocol' });
  });

  it('malformed_chunk: N tokens, then a chunk that is not JSON', async () => {
    const { seen, error } = await collectUntilFailure(await clientWith({ type: 'malformed_chunk', afterTokens: 2 }).stream(upstreamCall('m')));
    expect(contentTokens(seen)).toBe(2);
    expect(error).toMatchObject({ kind: 'protocol', message: expect.stringContaining('malformed') as unknown });
    expect(await upstreamFailure(clientWith({ type: 'malformed_chunk', afterTokens: 0 }).complete(upstreamCall('m')))).toMatchObject({
      kind: 'protocol',
    });
  });

  it('reset: the connection is reset before the response, or after N tokens', async () => {
    const before = await upstreamFailure(clientWith({ type: 'reset' }).stream(upstreamCall('m')));
    expect(before).toMatchObject({ kind: 'connect', retryable: true });
    const { seen, error } = await collectUntilFailure(await clientWith({ type: 'reset', afterTokens: 3 }).stream(upstreamCall('m')));
    expect(contentTokens(seen)).toBe(3);
    expect(error).toMatchObject({ kind: 'connect', retryable: true });
    await eventually(() => sandbox.stats().inFlight === 0, 'the reset requests to end');
  });

  it('combines a pace override with a failure', async () => {
    const start = performance.now();
    const faults: SandboxFault[] = [{ type: 'pace', timeToFirstTokenMs: 100 }, { type: 'cut_after_tokens', tokens: 1 }];
    const { seen } = await collectUntilFailure(await clientWith(faults).stream(upstreamCall('m')));
    expect(contentTokens(seen)).toBe(1);
    expect(performance.now() - start).toBeGreaterThanOrEqual(95);
  });
});

describe('sandbox server: lifecycle', () => {
  it('ends a stream when the client aborts', async () => {
    const own = await startSandboxServer({ pace: { timeToFirstTokenMs: 0, tokensPerSecond: 100 } });
    try {
      const controller = new AbortController();
      const adapter = createOpenAICompatibleAdapter({ name: 's', baseUrl: own.url, apiKey: null, paid: false });
      const events = await adapter.stream({ request: chatRequest(), model: 'm', signal: controller.signal });
      let n = 0;
      const { error } = await collectUntilFailure(
        (async function* () {
          for await (const e of events) {
            if (++n === 2) controller.abort();
            yield e;
          }
        })(),
      );
      expect(error).toMatchObject({ kind: 'aborted' });
      await eventually(() => own.stats().inFlight === 0, 'the server to see the client leave');
    } finally {
      await own.close();
    }
  });

  it('close() ends open and stalled connections promptly', async () => {
    const own = await startSandboxServer({ host: '127.0.0.1' });
    expect(own.url).toBe(`http://127.0.0.1:${own.port}/v1`);
    own.setFault({ type: 'stall_before_first_token' });
    const adapter = createOpenAICompatibleAdapter({ name: 's', baseUrl: own.url, apiKey: null, paid: false });
    const events = await adapter.stream(upstreamCall('m'));
    const pending = collectUntilFailure(events);
    await within(own.close(), 1000, 'close()');
    expect((await pending).error).toMatchObject({ kind: 'connect' });
  });
});
