import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAnthropicAdapter, type AnthropicOptions } from '../../src/providers/anthropic/adapter.js';
import { CONTINUE_INSTRUCTION } from '../../src/providers/continuation.js';
import type { ProviderAdapter, UpstreamCall } from '../../src/providers/contract.js';
import type { ChatMessage, ChatRequest } from '../../src/openai/chat-types.js';
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

const anthropic = (name: string): string => fixture(name, 'anthropic');
const TEXT_STREAM = anthropic('stream-text.sse');
const TOOL_STREAM = anthropic('stream-tool-use.sse');
const THINKING_STREAM = anthropic('stream-thinking.sse');
const ERROR_STREAM = anthropic('stream-error.sse');
/** message_start, the text block's start, a ping and "Hello": mid-answer. */
const TEXT_HEAD = TEXT_STREAM.split('\n\n').slice(0, 4).join('\n\n') + '\n\n';
const ERROR_STATUSES = [400, 401, 404, 429, 500, 529] as const;

type Ev = { type: string } & Record<string, unknown>;

function sse(events: readonly Ev[]): string {
  return events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join('');
}

function messageStart(usage: Record<string, unknown> = { input_tokens: 10, output_tokens: 1 }): Ev {
  return {
    type: 'message_start',
    message: { id: 'msg_01', type: 'message', role: 'assistant', content: [], model: 'claude-sonnet-4-5-20250929', stop_reason: null, stop_sequence: null, usage },
  };
}

/** A documented-shape text stream built from its pieces. */
function textStream(pieces: string[], stopReason: string = 'end_turn', usage: Record<string, unknown> = { output_tokens: 7 }): Ev[] {
  return [
    messageStart(),
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    ...pieces.map((t) => ({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: t } })),
    { type: 'content_block_stop', index: 0 },
    { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage },
    { type: 'message_stop' },
  ];
}

/** The `sse` scenario streams whatever events the test put in this header (the adapter forwards extraHeaders). */
function serving(events: readonly Ev[]): Partial<AnthropicOptions> {
  return { extraHeaders: { 'x-fixture-sse': encodeURIComponent(JSON.stringify(events)) } };
}

function headerEvents(raw: string | string[] | undefined): Ev[] {
  return JSON.parse(decodeURIComponent(String(raw))) as Ev[];
}

let server: FixtureServer;

beforeAll(async () => {
  const json = (status: number, body: string) => (_req: unknown, res: ServerResponse) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(body);
  };
  const statusScenarios = Object.fromEntries(
    ERROR_STATUSES.map((s) => [`status-${s}`, json(s, anthropic(`error-${s}.json`))]),
  );
  server = await startFixtureServer({
    ...statusScenarios,
    text: async (_req, res) => {
      sseHead(res);
      await writeInPieces(res, TEXT_STREAM);
      res.end();
    },
    tool: async (_req, res) => {
      sseHead(res);
      await writeInPieces(res, TOOL_STREAM);
      res.end();
    },
    thinking: async (_req, res) => {
      sseHead(res);
      await writeInPieces(res, THINKING_STREAM);
      res.end();
    },
    'stream-error': async (_req, res) => {
      sseHead(res);
      await writeInPieces(res, ERROR_STREAM);
      res.end();
    },
    sse: async (req, res) => {
      sseHead(res);
      await writeInPieces(res, sse(headerEvents(req.headers['x-fixture-sse'])));
      res.end();
    },
    /** Answers a trailing assistant turn as Claude 4.6+ does, anything else with a short stream. */
    'no-prefill': async (_req, res, body) => {
      const messages = (JSON.parse(body) as { messages: { role: string }[] }).messages;
      if (messages.at(-1)?.role === 'assistant') {
        res.writeHead(400, { 'content-type': 'application/json' }).end(anthropic('error-prefill-400.json'));
        return;
      }
      sseHead(res);
      await writeInPieces(res, sse(textStream([' and', ' so on.'])));
      res.end();
    },
    message: json(200, anthropic('message.json')),
    'message-tool': json(200, anthropic('message-tool-use.json')),
    'message-thinking': json(200, anthropic('message-thinking-cached.json')),
    /** A non-streamed answer whose text blocks the test put in the `x-fixture-text` header. */
    'message-text': (req, res) => {
      const pieces = JSON.parse(decodeURIComponent(String(req.headers['x-fixture-text']))) as string[];
      const message = JSON.parse(anthropic('message.json')) as Record<string, unknown>;
      message.content = pieces.map((t) => ({ type: 'text', text: t }));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(message));
    },
    'error-in-200': json(200, anthropic('error-529.json')),
    'json-for-stream': json(200, anthropic('message-tool-use.json')),
    'invalid-json': json(200, '{"id": "msg_01", "content": ['),
    'status-502-html': (_req, res) => {
      res.writeHead(502, { 'content-type': 'text/html' }).end('<html><body>Bad Gateway</body></html>');
    },
    cut: async (_req, res) => {
      sseHead(res);
      await writeInPieces(res, TEXT_HEAD);
      res.end();
    },
    'cut-after-delta': async (_req, res) => {
      sseHead(res);
      // Everything but message_stop: a stop reason is not the end of an Anthropic stream.
      await writeInPieces(res, TEXT_STREAM.slice(0, TEXT_STREAM.indexOf('event: message_stop')));
      res.end();
    },
    malformed: async (_req, res) => {
      sseHead(res);
      await writeInPieces(res, TEXT_HEAD + 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{\n\n');
      res.end();
    },
    'reset-mid': async (req, res) => {
      sseHead(res);
      await writeInPieces(res, TEXT_HEAD);
      await new Promise((r) => setTimeout(r, 20));
      req.socket.resetAndDestroy();
    },
    hold: async (_req, res) => {
      sseHead(res);
      await writeInPieces(res, TEXT_HEAD);
      // Never ends: only the client can close this.
    },
  });
});

afterAll(async () => {
  await server.close();
});

function adapter(scenario: string, extra: Partial<AnthropicOptions> = {}): ProviderAdapter {
  return createAnthropicAdapter({
    name: 'anthropic',
    baseUrl: server.baseUrl(scenario),
    apiKey: 'sk-ant-test-123',
    apiVersion: '2026-10-21',
    paid: true,
    ...extra,
  });
}

function lastRequest(): { path: string; headers: Record<string, unknown>; json: Record<string, unknown> } {
  const r = server.requests.at(-1);
  if (!r) throw new Error('no upstream request recorded');
  return { path: r.path, headers: r.headers, json: JSON.parse(r.body) as Record<string, unknown> };
}

function continuing(model: string, partial: string, overrides: Partial<ChatRequest> = {}): UpstreamCall {
  return { ...upstreamCall(model, overrides), continuation: { partial } };
}

const WEATHER_TOOL = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Get the current weather in a given location',
    parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
  },
};

describe('anthropic adapter: request translation', () => {
  const conversation: ChatMessage[] = [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: 'What is in these images?' },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'Compare them.' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' } },
        { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
        { type: 'text', text: '' },
      ],
    },
    { role: 'developer', content: [{ type: 'text', text: 'Answer in English.' }] },
    {
      role: 'assistant',
      content: 'Let me check.',
      tool_calls: [
        { id: 'toolu_01', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } },
        { id: 'toolu_02', type: 'function', function: { name: 'get_time', arguments: '' } },
      ],
    },
    { role: 'tool', tool_call_id: 'toolu_01', content: '15 degrees' },
    { role: 'tool', tool_call_id: 'toolu_02', content: [{ type: 'text', text: '10:00' }] },
    { role: 'user', content: 'Thanks. And tomorrow?', name: 'alice' },
  ];
  const translatedMessages = [
    {
      role: 'user',
      content: [
        { type: 'text', text: 'What is in these images?' },
        { type: 'text', text: 'Compare them.' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
        { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
      ],
    },
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Let me check.' },
        { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { location: 'Paris' } },
        { type: 'tool_use', id: 'toolu_02', name: 'get_time', input: {} },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_01', content: '15 degrees' },
        { type: 'tool_result', tool_use_id: 'toolu_02', content: [{ type: 'text', text: '10:00' }] },
        { type: 'text', text: 'Thanks. And tomorrow?' },
      ],
    },
  ];
  /** Options with an Anthropic field, and options that are dropped by design (see request-body.ts). */
  const options: Partial<ChatRequest> = {
    messages: conversation,
    max_tokens: 512,
    temperature: 1.6,
    top_p: 1,
    stop: '\n\nHuman:',
    tools: [WEATHER_TOOL],
    tool_choice: 'required',
    parallel_tool_calls: false,
    user: 'user-1234',
    seed: 42,
    presence_penalty: 0.5,
    frequency_penalty: 0.3,
    metadata: { tag: 'x' },
    response_format: { type: 'text' },
    logprobs: false,
  };
  const translated = {
    model: 'claude-sonnet-4-5',
    max_tokens: 512,
    system: 'You are terse.\n\nAnswer in English.',
    messages: translatedMessages,
    stop_sequences: ['\n\nHuman:'],
    tools: [
      {
        name: 'get_weather',
        description: 'Get the current weather in a given location',
        input_schema: WEATHER_TOOL.function.parameters,
      },
    ],
    tool_choice: { type: 'any', disable_parallel_tool_use: true },
    metadata: { user_id: 'user-1234' },
    stream: true,
  };

  it('2026-10-21: sends a Bearer key and the translated body without sampling parameters', async () => {
    const a = adapter('text', { extraHeaders: { 'anthropic-beta': 'some-beta-2026-01-01' } });
    await collect(await a.stream(upstreamCall('claude-sonnet-4-5', options)));
    const { path, headers, json } = lastRequest();
    expect(path).toBe('/text/v1/messages');
    expect(headers['anthropic-version']).toBe('2026-10-21');
    expect(headers.authorization).toBe('Bearer sk-ant-test-123');
    expect(headers).not.toHaveProperty('x-api-key');
    expect(headers['content-type']).toBe('application/json');
    expect(headers.accept).toBe('text/event-stream');
    expect(headers['anthropic-beta']).toBe('some-beta-2026-01-01');
    expect(json).toEqual(translated);
  });

  it('2023-06-01: sends x-api-key and the temperature, clamped to 1', async () => {
    await collect(await adapter('text', { apiVersion: '2023-06-01' }).stream(upstreamCall('claude-sonnet-4-5', options)));
    const { headers, json } = lastRequest();
    expect(headers['anthropic-version']).toBe('2023-06-01');
    expect(headers['x-api-key']).toBe('sk-ant-test-123');
    expect(headers).not.toHaveProperty('authorization');
    expect(json).toEqual({ ...translated, temperature: 1 });
  });

  it('2023-06-01: keeps a temperature in range, and sends top_p instead when the client lowered it', async () => {
    const a = adapter('text', { apiVersion: '2023-06-01' });
    await collect(await a.stream(upstreamCall('m', { temperature: 0.2 })));
    expect(lastRequest().json).toMatchObject({ temperature: 0.2 });
    expect(lastRequest().json).not.toHaveProperty('top_p');
    await collect(await a.stream(upstreamCall('m', { temperature: 0.7, top_p: 0.9 })));
    expect(lastRequest().json).toMatchObject({ top_p: 0.9 });
    expect(lastRequest().json).not.toHaveProperty('temperature');
  });

  it('sends no key header without a key, and no stream flag on a non-streamed call', async () => {
    await adapter('message', { apiKey: null }).complete(upstreamCall('claude-sonnet-4-5', { stream: false }));
    const { headers, json } = lastRequest();
    expect(headers).not.toHaveProperty('authorization');
    expect(headers).not.toHaveProperty('x-api-key');
    expect(headers.accept).toBe('application/json');
    expect(json).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 256,
      system: 'You are terse.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Say hello.' }] }],
    });
  });

  it('maps every tool_choice, and parallel_tool_calls: false without one', async () => {
    const cases: [ChatRequest['tool_choice'], boolean | undefined, unknown][] = [
      ['auto', undefined, { type: 'auto' }],
      ['none', undefined, { type: 'none' }],
      ['required', undefined, { type: 'any' }],
      [{ type: 'function', function: { name: 'get_weather' } }, false, { type: 'tool', name: 'get_weather', disable_parallel_tool_use: true }],
      [undefined, false, { type: 'auto', disable_parallel_tool_use: true }],
    ];
    for (const [choice, parallel, expected] of cases) {
      const overrides: Partial<ChatRequest> = { tools: [WEATHER_TOOL] };
      if (choice !== undefined) overrides.tool_choice = choice;
      if (parallel !== undefined) overrides.parallel_tool_calls = parallel;
      await collect(await adapter('text').stream(upstreamCall('m', overrides)));
      expect(lastRequest().json.tool_choice).toEqual(expected);
    }
    await collect(await adapter('text').stream(upstreamCall('m', { tools: [WEATHER_TOOL] })));
    expect(lastRequest().json).not.toHaveProperty('tool_choice');
    await collect(await adapter('text').stream(upstreamCall('m', { tool_choice: 'none' })));
    expect(lastRequest().json).not.toHaveProperty('tools');
    expect(lastRequest().json).not.toHaveProperty('tool_choice');
  });

  it('gives a tool without parameters an empty object schema, and sends a stop list as is', async () => {
    const bare = { type: 'function' as const, function: { name: 'get_time' } };
    await collect(await adapter('text').stream(upstreamCall('m', { tools: [bare], stop: ['END', 'STOP'] })));
    expect(lastRequest().json).toMatchObject({
      tools: [{ name: 'get_time', input_schema: { type: 'object', properties: {} } }],
      stop_sequences: ['END', 'STOP'],
    });
  });

  it('puts tool results before other blocks of the user turn they are merged into', async () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'Weather in Oslo?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_9', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] },
      { role: 'user', content: 'In Celsius, please.' },
      { role: 'tool', tool_call_id: 'toolu_9', content: '' },
    ];
    await collect(await adapter('text').stream(upstreamCall('m', { messages })));
    expect(lastRequest().json.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather in Oslo?' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_9', name: 'get_weather', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_9' }, { type: 'text', text: 'In Celsius, please.' }] },
    ]);
  });

  it('sends a PDF file part as a document block', async () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: [{ type: 'file', file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0x' } }] },
    ];
    await collect(await adapter('text').stream(upstreamCall('m', { messages })));
    expect(lastRequest().json.messages).toEqual([
      { role: 'user', content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0x' } }] },
    ]);
  });

  it('refuses options Anthropic cannot honour with a 400, before calling the upstream', async () => {
    const refused: [string, Partial<ChatRequest>][] = [
      ['logit_bias', { logit_bias: { '50256': -100 } }],
      ['logprobs', { logprobs: true, top_logprobs: 2 }],
      ['json_object', { response_format: { type: 'json_object' } }],
      ['audio', { messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] }] }],
      ['image', { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'ftp://example.com/a.png' } }] }] }],
      ['file_id', { messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-abc' } }] }] }],
      [
        'arguments',
        { messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{"a":' } }] }] },
      ],
    ];
    const before = server.requests.length;
    for (const [what, overrides] of refused) {
      const err = await upstreamFailure(adapter('text').stream(upstreamCall('m', overrides)));
      expect(err, what).toMatchObject({ kind: 'unsupported', status: null });
    }
    expect(server.requests.length).toBe(before);
  });

  it('sends json_schema as structured outputs (output_config.format); which models take it is decided before the adapter', async () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
    await collect(await adapter('text').stream(upstreamCall('m', { response_format: { type: 'json_schema', json_schema: { name: 'x', schema } } })));
    expect(lastRequest().json.output_config).toEqual({ format: { type: 'json_schema', schema } });
    expect(lastRequest().json).not.toHaveProperty('response_format');
  });

  it('drops an empty logit_bias instead of refusing it', async () => {
    await collect(await adapter('text').stream(upstreamCall('m', { logit_bias: {} })));
    expect(lastRequest().json).not.toHaveProperty('logit_bias');
  });
});

describe('anthropic adapter: continuation by prefill', () => {
  it('appends the partial, trailing whitespace trimmed, as the final assistant turn', async () => {
    const partial = 'My name is ';
    const events = await collect(await adapter('sse', serving(textStream([' Claude', '.']))).stream(continuing('m', partial)));
    expect(lastRequest().json.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Say hello.' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'My name is' }] },
    ]);
    // The client holds "My name is ": the model's " Claude" must not become a double space.
    expect(text(events)).toBe('Claude.');
  });

  it('drops a repeated whitespace echo spread over several deltas, and only that', async () => {
    const cases: [partial: string, pieces: string[], expected: string][] = [
      ['One.\n\n', ['\n', '\nTwo.'], 'Two.'],
      ['One.\n\n', ['\n\n', 'Two.'], 'Two.'],
      ['One.\n\n', ['\nTwo.'], 'Two.'],
      ['My name is ', ['Claude'], 'Claude'],
      ['My name is ', ['  Claude'], ' Claude'],
      ['My name is', [' Claude'], ' Claude'],
      ['Two words', [' and', ' more '], ' and more '],
    ];
    for (const [partial, pieces, expected] of cases) {
      const events = await collect(await adapter('sse', serving(textStream(pieces))).stream(continuing('m', partial)));
      expect(text(events), JSON.stringify([partial, pieces])).toBe(expected);
    }
  });

  it('merges the prefill into a conversation that already ends with an assistant turn', async () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'Count.' },
      { role: 'assistant', content: 'One,' },
    ];
    await collect(await adapter('sse', serving(textStream([' three.']))).stream(continuing('m', ' two, ', { messages })));
    expect(lastRequest().json.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Count.' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'One,' }, { type: 'text', text: ' two,' }] },
    ]);
  });

  it('sends no assistant turn for an all-whitespace partial, and still drops its echo', async () => {
    const events = await collect(await adapter('sse', serving(textStream(['\n\nHello']))).stream(continuing('m', '\n\n')));
    expect(lastRequest().json.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'Say hello.' }] }]);
    expect(text(events)).toBe('Hello');
  });

  it('trims the echo from a non-streamed continuation too', async () => {
    const a = adapter('message-text', { extraHeaders: { 'x-fixture-text': encodeURIComponent(JSON.stringify([' Claude', '.'])) } });
    const result = await a.complete(continuing('m', 'My name is ', { stream: false }));
    expect(result.message.content).toBe('Claude.');
    expect((lastRequest().json.messages as unknown[]).at(-1)).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'My name is' }] });
  });

  it('falls back to asking in words when the model refuses prefill, and remembers it for that model', async () => {
    const a = adapter('no-prefill');
    const before = server.requests.length;
    const events = await collect(await a.stream(continuing('claude-opus-4-6', 'Once upon a time ')));
    expect(text(events)).toBe(' and so on.');
    expect(server.requests.length - before).toBe(2);
    expect(lastRequest().json.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Say hello.' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Once upon a time ' }] },
      { role: 'user', content: [{ type: 'text', text: CONTINUE_INSTRUCTION }] },
    ]);

    await collect(await a.stream(continuing('claude-opus-4-6', 'Again ')));
    expect(server.requests.length - before).toBe(3);
    await collect(await a.stream(continuing('claude-sonnet-4-5', 'Again ')));
    expect(server.requests.length - before).toBe(5);
  });

  it('does not retry other 400s of a prefill call', async () => {
    const before = server.requests.length;
    const err = await upstreamFailure(adapter('status-400').stream(continuing('m', 'Once ')));
    expect(err).toMatchObject({ kind: 'http', status: 400 });
    expect(server.requests.length - before).toBe(1);
  });
});

describe('anthropic adapter: streams', () => {
  it('relays a text stream written in odd-sized pieces, with its stop reason and usage', async () => {
    const events = await collect(await adapter('text').stream(upstreamCall('claude-sonnet-4-5')));
    expect(text(events)).toBe('Hello! 👋');
    expect(deltas(events)[0]).toEqual({ delta: { role: 'assistant', content: '' }, finishReason: null });
    expect(finishReasons(events)).toEqual(['stop']);
    expect(usages(events)).toEqual([{ promptTokens: 25, completionTokens: 15 }]);
    expect(events.at(-1)?.type).toBe('usage');
  });

  it('turns tool_use blocks into OpenAI tool-call deltas numbered from 0', async () => {
    const events = await collect(await adapter('tool').stream(upstreamCall('claude-sonnet-4-5', { tools: [WEATHER_TOOL] })));
    expect(text(events)).toBe("Okay, let's check the weather for San Francisco, CA:");
    const calls = deltas(events).flatMap((d) => d.delta.tool_calls ?? []);
    expect(calls[0]).toEqual({
      index: 0,
      id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6',
      type: 'function',
      function: { name: 'get_weather', arguments: '' },
    });
    // The empty first partial_json is not relayed.
    expect(calls.slice(1).every((c) => c.index === 0 && (c.function?.arguments ?? '').length > 0)).toBe(true);
    const args = calls.map((c) => c.function?.arguments ?? '').join('');
    expect(JSON.parse(args)).toEqual({ location: 'San Francisco, CA', unit: 'fahrenheit' });
    expect(finishReasons(events)).toEqual(['tool_calls']);
    expect(usages(events)).toEqual([{ promptTokens: 472, completionTokens: 89 }]);
  });

  it('numbers parallel tool calls by call, not by content block, and gives input-less calls "{}"', async () => {
    const events: Ev[] = [
      messageStart(),
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: 'Checking both.' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_a', name: 'get_time', input: {} } },
      { type: 'content_block_stop', index: 1 },
      { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'toolu_b', name: 'get_weather', input: {} } },
      { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"location":"Oslo"}' } },
      { type: 'content_block_stop', index: 2 },
      { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 40 } },
      { type: 'message_stop' },
    ];
    const out = await collect(await adapter('sse', serving(events)).stream(upstreamCall('m')));
    expect(text(out)).toBe('Checking both.');
    const calls = deltas(out).flatMap((d) => d.delta.tool_calls ?? []);
    expect(calls).toEqual([
      { index: 0, id: 'toolu_a', type: 'function', function: { name: 'get_time', arguments: '' } },
      { index: 0, function: { arguments: '{}' } },
      { index: 1, id: 'toolu_b', type: 'function', function: { name: 'get_weather', arguments: '' } },
      { index: 1, function: { arguments: '{"location":"Oslo"}' } },
    ]);
    expect(finishReasons(out)).toEqual(['tool_calls']);
  });

  it('relays thinking as reasoning_content deltas, never as content, and reports no usage it was not given', async () => {
    const events = await collect(await adapter('thinking').stream(upstreamCall('m')));
    // Only the text block is the answer.
    expect(text(events)).toBe('27 * 453 = 12,231');
    // Each of the fixture's six thinking_deltas, as sent and in order; the signature_delta is not text anyone can read.
    const thinking = deltas(events).filter((d) => d.delta.reasoning_content !== undefined);
    expect(thinking.map((d) => d.delta)).toEqual([
      { reasoning_content: 'Let me solve this step by step:\n\n1. First break down 27 * 453' },
      { reasoning_content: '\n2. 453 = 400 + 50 + 3' },
      { reasoning_content: '\n3. 27 * 400 = 10,800' },
      { reasoning_content: '\n4. 27 * 50 = 1,350' },
      { reasoning_content: '\n5. 27 * 3 = 81' },
      { reasoning_content: '\n6. 10,800 + 1,350 + 81 = 12,231' },
    ]);
    // Nor does the answer leak the other way.
    expect(reasoning(events)).not.toContain('27 * 453 = 12,231');
    expect(finishReasons(events)).toEqual(['stop']);
    // The fixture (the documented example) carries no usage at all: the gateway estimates rather than trust zeros.
    expect(usages(events)).toEqual([]);
  });

  it('relays an empty thinking_delta as an empty delta, so the stall deadline still sees the model working', async () => {
    const events: Ev[] = [
      messageStart(),
      { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Hmm.' } },
      { type: 'content_block_stop', index: 0 },
      ...textStream(['Hi']).slice(1),
    ];
    const out = await collect(await adapter('sse', serving(events)).stream(upstreamCall('m')));
    expect(deltas(out).slice(1, 3)).toEqual([
      { delta: {}, finishReason: null },
      { delta: { reasoning_content: 'Hmm.' }, finishReason: null },
    ]);
    expect(text(out)).toBe('Hi');
  });

  it('maps every stop reason', async () => {
    const expected: Record<string, string> = {
      end_turn: 'stop',
      stop_sequence: 'stop',
      max_tokens: 'length',
      model_context_window_exceeded: 'length',
      tool_use: 'tool_calls',
      refusal: 'content_filter',
      pause_turn: 'stop',
      a_reason_added_later: 'stop',
    };
    for (const [reason, finish] of Object.entries(expected)) {
      const events = await collect(await adapter('sse', serving(textStream(['Hi'], reason))).stream(upstreamCall('m')));
      expect(finishReasons(events), reason).toEqual([finish]);
    }
  });

  it('counts cache writes and reads as prompt tokens, only reads as cached, taking the cumulative message_delta counts last', async () => {
    const start = messageStart({ input_tokens: 12, cache_creation_input_tokens: 2000, cache_read_input_tokens: 0, output_tokens: 1 });
    const onlyStart = [start, ...textStream(['Hi']).slice(1)];
    const events = await collect(await adapter('sse', serving(onlyStart)).stream(upstreamCall('m')));
    // 12 + 2000 written; nothing was read from the cache, and a write is not OpenAI's `cached_tokens` (a hit).
    expect(usages(events)).toEqual([{ promptTokens: 2012, completionTokens: 7, cachedTokens: 0 }]);

    const cumulative = textStream(['Hi'], 'end_turn', {
      input_tokens: 30,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 1000,
      output_tokens: 15,
    });
    const later = await collect(await adapter('sse', serving([start, ...cumulative.slice(1)])).stream(upstreamCall('m')));
    // 30 + 0 written + 1000 read: the 1000 reads are the cached part of the prompt.
    expect(usages(later)).toEqual([{ promptTokens: 1030, completionTokens: 15, cachedTokens: 1000 }]);
  });

  it('skips unknown event and block types', async () => {
    const events: Ev[] = [
      messageStart(),
      { type: 'content_block_start', index: 0, content_block: { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} } },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"query":"x"}' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'a_future_event', payload: 1 },
      { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'citations_delta', citation: {} } },
      { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Found it.' } },
      { type: 'content_block_stop', index: 1 },
      { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 9 } },
      { type: 'message_stop' },
    ];
    const out = await collect(await adapter('sse', serving(events)).stream(upstreamCall('m')));
    expect(text(out)).toBe('Found it.');
    expect(deltas(out).some((d) => d.delta.tool_calls !== undefined)).toBe(false);
  });

  it('turns a plain JSON answer to a stream request into events', async () => {
    const events = await collect(await adapter('json-for-stream').stream(upstreamCall('m')));
    expect(text(events)).toBe("I'll check the current weather in San Francisco for you.");
    expect(deltas(events)[0]?.delta.tool_calls?.[0]).toMatchObject({ index: 0, id: 'toolu_01A09q90qw90lq917835lq9' });
    expect(finishReasons(events)).toEqual(['tool_calls']);
    expect(usages(events)).toEqual([{ promptTokens: 472, completionTokens: 89 }]);
  });
});

describe('anthropic adapter: complete', () => {
  it('parses a message', async () => {
    const result = await adapter('message').complete(upstreamCall('claude-sonnet-4-5', { stream: false }));
    expect(result).toEqual({
      message: { role: 'assistant', content: 'Hi! My name is Claude.' },
      finishReason: 'stop',
      usage: { promptTokens: 2095, completionTokens: 503 },
      model: 'claude-sonnet-4-5-20250929',
    });
  });

  it('parses a tool_use message', async () => {
    const result = await adapter('message-tool').complete(upstreamCall('claude-sonnet-4-5', { stream: false }));
    expect(result.finishReason).toBe('tool_calls');
    expect(result.message).toEqual({
      role: 'assistant',
      content: "I'll check the current weather in San Francisco for you.",
      tool_calls: [
        {
          id: 'toolu_01A09q90qw90lq917835lq9',
          type: 'function',
          function: { name: 'get_weather', arguments: '{"location":"San Francisco, CA","unit":"celsius"}' },
        },
      ],
    });
  });

  it('relays a thinking block as reasoning_content apart from the answer, and counts only cache reads as cached', async () => {
    const result = await adapter('message-thinking').complete(upstreamCall('m', { stream: false }));
    expect(result.message).toEqual({
      role: 'assistant',
      content: 'Yes, there are infinitely many prime numbers such that...',
      reasoning_content: "To approach this, let's think about what we know about prime numbers...",
    });
    expect(result.finishReason).toBe('length');
    // Prompt: 50 + 2000 written + 100000 read; cached: the 100000 read only. Thinking is inside output_tokens
    // and the fixture gives no separate count of it, so no reasoningTokens.
    expect(result.usage).toEqual({ promptTokens: 102050, completionTokens: 4096, cachedTokens: 100000 });
  });

  it('maps an error envelope sent with a 200 by its type', async () => {
    const err = await upstreamFailure(adapter('error-in-200').complete(upstreamCall('m', { stream: false })));
    expect(err).toMatchObject({ kind: 'http', status: 529, retryable: true });
  });

  it('refuses an invalid JSON body as a protocol error', async () => {
    const err = await upstreamFailure(adapter('invalid-json').complete(upstreamCall('m', { stream: false })));
    expect(err).toMatchObject({ kind: 'protocol', retryable: true });
  });
});

describe('anthropic adapter: failures', () => {
  it('maps non-2xx error bodies to http errors with the status, type and message', async () => {
    const expected: Record<number, { retryable: boolean; text: string }> = {
      400: { retryable: false, text: 'invalid_request_error: messages: roles must alternate' },
      401: { retryable: false, text: 'authentication_error: invalid x-api-key' },
      404: { retryable: false, text: 'not_found_error: The requested resource could not be found.' },
      429: { retryable: true, text: 'rate_limit_error: This request would exceed the rate limit' },
      500: { retryable: true, text: 'api_error: Internal server error' },
      529: { retryable: true, text: 'overloaded_error: Overloaded' },
    };
    for (const status of ERROR_STATUSES) {
      const call = status % 2 === 0 ? adapter(`status-${status}`).stream(upstreamCall('m')) : adapter(`status-${status}`).complete(upstreamCall('m'));
      const err = await upstreamFailure(call);
      expect(err, String(status)).toMatchObject({ kind: 'http', status, retryable: expected[status]?.retryable });
      expect(err.message).toContain(expected[status]?.text);
      expect(err.message).toContain('req_011CSHoEeqs5C35K2UUqR7Fy');
    }
  });

  it('uses the body text when the error is not an envelope', async () => {
    const err = await upstreamFailure(adapter('status-502-html').stream(upstreamCall('m')));
    expect(err).toMatchObject({ kind: 'http', status: 502, retryable: true });
    expect(err.message).toContain('Bad Gateway');
  });

  it('raises an overloaded_error event mid-stream as a retryable 529', async () => {
    const seen: string[] = [];
    const iterate = async (): Promise<void> => {
      for await (const e of eachEvent(await adapter('stream-error').stream(upstreamCall('m')))) {
        if (e.type === 'delta') seen.push(e.delta.content ?? '');
      }
    };
    const err = await upstreamFailure(iterate());
    expect(seen.join('')).toBe('Once upon');
    expect(err).toMatchObject({ kind: 'http', status: 529, retryable: true });
    expect(err.message).toContain('overloaded_error: Overloaded');
  });

  it('gives each error event type the status it stands for', async () => {
    const cases: [string, number | null, boolean][] = [
      ['rate_limit_error', 429, true],
      ['api_error', 500, true],
      ['invalid_request_error', 400, false],
      ['request_too_large', 413, false],
      ['an_error_added_later', null, true],
    ];
    for (const [type, status, retryable] of cases) {
      const events: Ev[] = [...textStream(['Hi']).slice(0, 3), { type: 'error', error: { type, message: 'nope' } }];
      const err = await upstreamFailure(collect(await adapter('sse', serving(events)).stream(upstreamCall('m'))));
      expect(err, type).toMatchObject({ kind: 'http', status, retryable });
    }
  });

  it('fails a stream that ends before message_stop, even after its stop reason, as a cut', async () => {
    const early = await upstreamFailure(collect(await adapter('cut').stream(upstreamCall('m'))));
    expect(early).toMatchObject({ kind: 'protocol', retryable: true });
    expect(early.message).toContain('no message_stop');
    const late = await upstreamFailure(collect(await adapter('cut-after-delta').stream(upstreamCall('m'))));
    expect(late).toMatchObject({ kind: 'protocol' });
  });

  it('fails a malformed event as a protocol error', async () => {
    const err = await upstreamFailure(collect(await adapter('malformed').stream(upstreamCall('m'))));
    expect(err).toMatchObject({ kind: 'protocol', retryable: true });
    expect(err.message).toContain('malformed stream event');
  });

  it('fails input for a block that never started as a protocol error', async () => {
    const events: Ev[] = [messageStart(), { type: 'content_block_delta', index: 3, delta: { type: 'input_json_delta', partial_json: '{}' } }];
    const err = await upstreamFailure(collect(await adapter('sse', serving(events)).stream(upstreamCall('m'))));
    expect(err).toMatchObject({ kind: 'protocol' });
  });

  it('maps a refused connection to connect, and a reset mid-stream to a failed iteration', async () => {
    const port = await closedPort();
    const refused = createAnthropicAdapter({
      name: 'x',
      baseUrl: `http://127.0.0.1:${port}/v1`,
      apiKey: 'k',
      apiVersion: '2026-10-21',
      paid: true,
    });
    const err = await upstreamFailure(refused.stream(upstreamCall('m')));
    expect(err).toMatchObject({ kind: 'connect', retryable: true });
    expect(err.message).toContain('ECONNREFUSED');
    const mid = await upstreamFailure(collect(await adapter('reset-mid').stream(upstreamCall('m'))));
    expect(mid).toMatchObject({ kind: 'connect', retryable: true });
  });
});

describe('anthropic adapter: cancellation', () => {
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
