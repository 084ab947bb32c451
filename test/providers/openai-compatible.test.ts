import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAICompatibleAdapter, type OpenAICompatibleOptions } from '../../src/providers/openai-compatible/adapter.js';
import type { ProviderAdapter } from '../../src/providers/contract.js';
import { collect, eachEvent, deltas, finishReasons, reasoning, text, upstreamCall, upstreamFailure, usages } from './helpers/calls.js';
import {
  closedPort,
  fixture,
  sseHead,
  startFixtureServer,
  within,
  writeInPieces,
  type FixtureServer,
} from './helpers/fixture-server.js';

const TEXT_STREAM = fixture('chat-stream-text.sse');
const TOOL_STREAM = fixture('chat-stream-tool-call.sse');
const ERROR_STREAM = fixture('chat-stream-error.sse');
/** The text stream's events before the finish chunk: enough to be mid-answer. */
const TEXT_HEAD = TEXT_STREAM.split('\n\n').slice(0, 4).join('\n\n') + '\n\n';

let server: FixtureServer;

beforeAll(async () => {
  server = await startFixtureServer({
    text: async (_req, res) => {
      sseHead(res);
      await writeInPieces(res, TEXT_STREAM);
      res.end();
    },
    'text-crlf': async (_req, res) => {
      sseHead(res);
      await writeInPieces(res, TEXT_STREAM.replace(/\n/g, '\r\n'));
      res.end();
    },
    tool: async (_req, res) => {
      sseHead(res);
      await writeInPieces(res, TOOL_STREAM);
      res.end();
    },
    'stream-error': async (_req, res) => {
      sseHead(res);
      await writeInPieces(res, ERROR_STREAM);
      res.end();
    },
    completion: (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(fixture('chat-completion.json'));
    },
    'completion-tool': (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(fixture('chat-completion-tool-call.json'));
    },
    'status-500': (_req, res) => {
      res.writeHead(500, { 'content-type': 'application/json' }).end(fixture('error-500.json'));
    },
    'status-429': (_req, res) => {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '20' }).end(fixture('error-429.json'));
    },
    'status-400': (_req, res) => {
      res.writeHead(400, { 'content-type': 'application/json' }).end(fixture('error-400.json'));
    },
    'status-502-html': (_req, res) => {
      res.writeHead(502, { 'content-type': 'text/html' }).end('<html><body>Bad Gateway</body></html>');
    },
    'reset-before': (req) => {
      req.socket.resetAndDestroy();
    },
    'reset-mid': async (req, res) => {
      sseHead(res);
      await writeInPieces(res, TEXT_HEAD);
      await new Promise((r) => setTimeout(r, 20));
      req.socket.resetAndDestroy();
    },
    malformed: async (_req, res) => {
      sseHead(res);
      await writeInPieces(res, TEXT_HEAD + 'data: {"id":"chatcmpl-x","choices":[{"index":0,"delta":{"content":\n\n');
      res.end();
    },
    cut: async (_req, res) => {
      sseHead(res);
      await writeInPieces(res, TEXT_HEAD);
      res.end();
    },
    'finish-no-done': async (_req, res) => {
      sseHead(res);
      await writeInPieces(res, TEXT_STREAM.replace('data: [DONE]\n\n', ''));
      res.end();
    },
    hold: async (_req, res) => {
      sseHead(res);
      await writeInPieces(res, TEXT_HEAD);
      // Never ends: only the client can close this.
    },
    'invalid-json': (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"id": "chatcmpl-1", "choices": [');
    },
    // A reasoning model behind a compatible server: reasoning_content deltas before the answer (as DeepSeek and
    // vLLM send them), and a usage with OpenAI's details, cached and reasoning tokens each a part of their total.
    reasoning: async (_req, res) => {
      sseHead(res);
      const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
        `data: ${JSON.stringify({ id: 'chatcmpl-r', object: 'chat.completion.chunk', created: 1741569952, model: 'deepseek-reasoner', system_fingerprint: 'fp_r1', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`;
      const usage = {
        prompt_tokens: 2048,
        completion_tokens: 300,
        total_tokens: 2348,
        prompt_tokens_details: { cached_tokens: 1920 },
        completion_tokens_details: { reasoning_tokens: 280 },
      };
      await writeInPieces(
        res,
        chunk({ role: 'assistant', content: null, reasoning_content: 'The user wants' }) +
          chunk({ content: null, reasoning_content: ' a yes or no.' }) +
          chunk({ content: 'Yes.', reasoning_content: null }) +
          chunk({}, 'stop') +
          `data: ${JSON.stringify({ id: 'chatcmpl-r', object: 'chat.completion.chunk', model: 'deepseek-reasoner', choices: [], usage })}\n\n` +
          'data: [DONE]\n\n',
      );
      res.end();
    },
    'json-for-stream': (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(fixture('chat-completion.json'));
    },
  });
});

afterAll(async () => {
  await server.close();
});

function adapter(scenario: string, extra: Partial<OpenAICompatibleOptions> = {}): ProviderAdapter {
  return createOpenAICompatibleAdapter({
    name: 'openai',
    baseUrl: server.baseUrl(scenario),
    apiKey: 'sk-test-123',
    paid: true,
    ...extra,
  });
}

function lastRequest(): { path: string; headers: Record<string, unknown>; json: Record<string, unknown> } {
  const r = server.requests.at(-1);
  if (!r) throw new Error('no upstream request recorded');
  return { path: r.path, headers: r.headers, json: JSON.parse(r.body) as Record<string, unknown> };
}

describe('openai-compatible adapter: streams', () => {
  it('relays a text stream and the include_usage final chunk', async () => {
    const events = await collect(await adapter('text').stream(upstreamCall('gpt-4o-mini')));
    expect(text(events)).toBe('Hello! How can I assist you today? 👋');
    expect(deltas(events)[0]?.delta).toEqual({ role: 'assistant', content: '', refusal: null });
    expect(finishReasons(events)).toEqual(['stop']);
    // The fixture's usage details: no prompt tokens from the cache, no reasoning tokens.
    expect(usages(events)).toEqual([{ promptTokens: 19, completionTokens: 10, cachedTokens: 0, reasoningTokens: 0 }]);
    expect(events.at(-1)?.type).toBe('usage');
    // What the fixture repeats on every chunk, relayed with each event (the model for traces only).
    expect(events.map((e) => e.meta)).toEqual(events.map(() => ({ systemFingerprint: 'fp_06737a9306', serviceTier: 'default', model: expect.any(String) })));
  });

  it('relays reasoning_content deltas apart from the content, with cached and reasoning tokens', async () => {
    const events = await collect(await adapter('reasoning').stream(upstreamCall('deepseek-reasoner')));
    expect(reasoning(events)).toBe('The user wants a yes or no.');
    // None of the reasoning reaches the content, and the answer chunk's `reasoning_content: null` adds none.
    expect(text(events)).toBe('Yes.');
    expect(deltas(events)[2]?.delta).toEqual({ content: 'Yes.' });
    expect(finishReasons(events)).toEqual(['stop']);
    expect(usages(events)).toEqual([{ promptTokens: 2048, completionTokens: 300, cachedTokens: 1920, reasoningTokens: 280 }]);
  });

  it('sends the translated request: target model, stream options, configured max-tokens field, no empty fields', async () => {
    const a = adapter('text', { maxTokensField: 'max_completion_tokens', extraHeaders: { 'x-org': 'acme' } });
    const call = upstreamCall('gpt-4o-mini', { seed: 42, stop: null, user: undefined, include_usage: false, max_tokens: 99 });
    await collect(await a.stream(call));
    const { path, headers, json } = lastRequest();
    expect(path).toBe('/text/v1/chat/completions');
    expect(headers.authorization).toBe('Bearer sk-test-123');
    expect(headers['x-org']).toBe('acme');
    expect(headers['content-type']).toBe('application/json');
    expect(json).toEqual({
      model: 'gpt-4o-mini',
      messages: call.request.messages,
      temperature: 1,
      top_p: 1,
      seed: 42,
      max_completion_tokens: 99,
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it('sends tools with tool_choice, and omits tool_choice without tools', async () => {
    const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object' } } }];
    await collect(await adapter('tool').stream(upstreamCall('gpt-4o', { tools, tool_choice: 'auto', parallel_tool_calls: false })));
    expect(lastRequest().json).toMatchObject({ tools, tool_choice: 'auto', parallel_tool_calls: false, max_tokens: 256 });
    await collect(await adapter('text').stream(upstreamCall('gpt-4o', { tool_choice: 'none' })));
    expect(lastRequest().json).not.toHaveProperty('tool_choice');
  });

  it('decodes a CRLF stream the same way', async () => {
    const events = await collect(await adapter('text-crlf').stream(upstreamCall('gpt-4o-mini')));
    expect(text(events)).toBe('Hello! How can I assist you today? 👋');
    expect(usages(events)).toHaveLength(1);
  });

  it('relays tool-call deltas as sent', async () => {
    const events = await collect(await adapter('tool').stream(upstreamCall('gpt-4o')));
    const ds = deltas(events);
    expect(ds[0]?.delta.tool_calls).toEqual([
      { index: 0, id: 'call_DdmO9pD3xa9XTPNJ32zg2hcA', type: 'function', function: { name: 'get_weather', arguments: '' } },
    ]);
    const args = ds.flatMap((d) => d.delta.tool_calls ?? []).map((t) => t.function?.arguments ?? '').join('');
    expect(args).toBe('{"location":"Paris, France"}');
    expect(finishReasons(events)).toEqual(['tool_calls']);
    expect(usages(events)).toEqual([{ promptTokens: 61, completionTokens: 16 }]);
  });

  it('raises an error object inside the stream as a retryable UpstreamError', async () => {
    const seen: string[] = [];
    const iterate = async (): Promise<void> => {
      for await (const e of eachEvent(await adapter('stream-error').stream(upstreamCall('gpt-4o-mini')))) {
        if (e.type === 'delta') seen.push(e.delta.content ?? '');
      }
    };
    const err = await upstreamFailure(iterate());
    expect(seen.join('')).toBe('Once upon');
    expect(err).toMatchObject({ kind: 'http', status: null, retryable: true });
    expect(err.message).toContain('The server had an error while processing your request');
  });

  it('accepts a body that ends after a finish_reason without [DONE]', async () => {
    const events = await collect(await adapter('finish-no-done').stream(upstreamCall('gpt-4o-mini')));
    expect(finishReasons(events)).toEqual(['stop']);
  });

  it('turns a plain JSON answer to a stream request into events', async () => {
    const events = await collect(await adapter('json-for-stream').stream(upstreamCall('gpt-4.1')));
    expect(text(events)).toBe('Hello! How can I assist you today?');
    expect(finishReasons(events)).toEqual(['stop']);
    expect(usages(events)).toEqual([{ promptTokens: 19, completionTokens: 10, cachedTokens: 0, reasoningTokens: 0 }]);
    // The answer's service_tier rides on its one delta; `logprobs: null` adds nothing.
    expect(events[0]).toMatchObject({ type: 'delta', meta: { serviceTier: 'default' } });
    expect(events[0]).not.toHaveProperty('logprobs');
  });
});

describe('openai-compatible adapter: complete', () => {
  it('parses a completion', async () => {
    const result = await adapter('completion').complete(upstreamCall('gpt-4.1', { stream: false }));
    expect(result).toEqual({
      message: { role: 'assistant', content: 'Hello! How can I assist you today?', refusal: null },
      finishReason: 'stop',
      // prompt_tokens_details.cached_tokens and completion_tokens_details.reasoning_tokens, both 0 in the fixture.
      usage: { promptTokens: 19, completionTokens: 10, cachedTokens: 0, reasoningTokens: 0 },
      model: 'gpt-4.1-2025-04-14',
      // choices[0].logprobs as sent (null: none were asked for), and the answer's service_tier; it has no system_fingerprint.
      logprobs: null,
      meta: { serviceTier: 'default', model: 'gpt-4.1-2025-04-14' },
    });
    const { json, headers } = lastRequest();
    expect(json).not.toHaveProperty('stream');
    expect(json).not.toHaveProperty('stream_options');
    expect(json.max_tokens).toBe(256);
    expect(headers.accept).toBe('application/json');
  });

  it('parses a tool-call completion', async () => {
    const result = await adapter('completion-tool').complete(upstreamCall('gpt-4o', { stream: false }));
    expect(result.finishReason).toBe('tool_calls');
    expect(result.message.tool_calls).toEqual([
      { id: 'call_12345xyz', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris, France"}' } },
    ]);
  });

  it('refuses an invalid JSON body as a protocol error', async () => {
    const err = await upstreamFailure(adapter('invalid-json').complete(upstreamCall('m', { stream: false })));
    expect(err).toMatchObject({ kind: 'protocol', retryable: true });
  });
});

describe('openai-compatible adapter: failures', () => {
  it('maps 500 to a retryable http error with the envelope message', async () => {
    const err = await upstreamFailure(adapter('status-500').stream(upstreamCall('m')));
    expect(err).toMatchObject({ kind: 'http', status: 500, retryable: true });
    expect(err.message).toContain('The server had an error while processing your request');
  });

  it('maps 429 to retryable and 400 to not retryable', async () => {
    const limited = await upstreamFailure(adapter('status-429').complete(upstreamCall('m')));
    expect(limited).toMatchObject({ kind: 'http', status: 429, retryable: true });
    expect(limited.message).toContain('Rate limit reached');
    const invalid = await upstreamFailure(adapter('status-400').stream(upstreamCall('m')));
    expect(invalid).toMatchObject({ kind: 'http', status: 400, retryable: false });
    expect(invalid.message).toContain("Invalid value for 'max_tokens'");
  });

  it('uses the body text when the error is not an envelope', async () => {
    const err = await upstreamFailure(adapter('status-502-html').stream(upstreamCall('m')));
    expect(err).toMatchObject({ kind: 'http', status: 502, retryable: true });
    expect(err.message).toContain('Bad Gateway');
  });

  it('maps a refused connection to a retryable connect error', async () => {
    const port = await closedPort();
    const a = createOpenAICompatibleAdapter({ name: 'x', baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: null, paid: false });
    const err = await upstreamFailure(a.stream(upstreamCall('m')));
    expect(err).toMatchObject({ kind: 'connect', retryable: true });
    expect(err.message).toContain('ECONNREFUSED');
  });

  it('maps a reset before the response to connect, and mid-stream to a failed iteration', async () => {
    const before = await upstreamFailure(adapter('reset-before').stream(upstreamCall('m')));
    expect(before).toMatchObject({ kind: 'connect', retryable: true });
    const events = await adapter('reset-mid').stream(upstreamCall('m'));
    const mid = await upstreamFailure(collect(events));
    expect(mid).toMatchObject({ kind: 'connect', retryable: true });
  });

  it('fails a malformed chunk as a protocol error', async () => {
    const err = await upstreamFailure(collect(await adapter('malformed').stream(upstreamCall('m'))));
    expect(err).toMatchObject({ kind: 'protocol', retryable: true });
    expect(err.message).toContain('malformed stream chunk');
  });

  it('fails a stream cut before any finish_reason', async () => {
    const err = await upstreamFailure(collect(await adapter('cut').stream(upstreamCall('m'))));
    expect(err).toMatchObject({ kind: 'protocol' });
    expect(err.message).toContain('ended early');
  });
});

describe('openai-compatible adapter: cancellation', () => {
  it('stops on abort with an aborted error and closes the upstream connection', async () => {
    const controller = new AbortController();
    const events = await adapter('hold').stream(upstreamCall('m', {}, controller.signal));
    const request = server.requests.at(-1);
    let seen = 0;
    const iterate = async (): Promise<void> => {
      for await (const e of events) {
        void e;
        if (++seen === 2) controller.abort();
      }
    };
    const err = await upstreamFailure(iterate());
    expect(err).toMatchObject({ kind: 'aborted', retryable: false });
    expect(seen).toBe(2);
    await within(request?.connectionClosed ?? Promise.reject(new Error('no request')), 2000, 'upstream connection to close');
  });

  it('reports a deadline signal as a timeout', async () => {
    const events = await adapter('hold').stream(upstreamCall('m', {}, AbortSignal.timeout(150)));
    const err = await upstreamFailure(collect(events));
    expect(err).toMatchObject({ kind: 'timeout', retryable: true });
  });

  it('rejects at once when the signal already fired', async () => {
    const controller = new AbortController();
    controller.abort();
    const err = await upstreamFailure(adapter('text').stream(upstreamCall('m', {}, controller.signal)));
    expect(err.kind).toBe('aborted');
  });

  it('closes the upstream connection when the consumer breaks out', async () => {
    const events = await adapter('hold').stream(upstreamCall('m'));
    const request = server.requests.at(-1);
    for await (const e of events) {
      void e;
      break;
    }
    await within(request?.connectionClosed ?? Promise.reject(new Error('no request')), 2000, 'upstream connection to close');
  });

  it('closes the upstream connection when the stream is given up before iterating', async () => {
    const events = await adapter('hold').stream(upstreamCall('m'));
    const request = server.requests.at(-1);
    await events[Symbol.asyncIterator]().return?.();
    await within(request?.connectionClosed ?? Promise.reject(new Error('no request')), 2000, 'upstream connection to close');
  });
});
