import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGeminiAdapter, type GeminiOptions } from '../../src/providers/gemini/adapter.js';
import { CONTINUE_INSTRUCTION } from '../../src/providers/continuation.js';
import type { ProviderAdapter, UpstreamCall } from '../../src/providers/contract.js';
import type { ChatMessage, ChatRequest } from '../../src/openai/chat-types.js';
import { collect, eachEvent, deltas, finishReasons, reasoning, text, upstreamCall, upstreamFailure, usages } from './helpers/calls.js';
import {
  closedPort,
  fixture as providerFixture,
  sseHead,
  startFixtureServer,
  within,
  writeInPieces,
  type FixtureServer,
} from './helpers/fixture-server.js';

const fixture = (name: string): string => providerFixture(name, 'gemini');

const TEXT_STREAM = fixture('stream-text.sse');
const CALL_STREAM = fixture('stream-function-call.sse');
const ERROR_STREAM = fixture('stream-error.sse');
const EVENT_END = '\r\n\r\n';
/** The text stream's chunks before the finish chunk: mid-answer. */
const TEXT_HEAD = TEXT_STREAM.split(EVENT_END).slice(0, 2).join(EVENT_END) + EVENT_END;
const TEXT_ANSWER = 'Hello! How can I help you today? 👋';

/** The SSE framing Gemini uses: a `data:` line per chunk, events ended by CRLF CRLF. */
function sse(...payloads: unknown[]): string {
  return payloads.map((p) => `data: ${JSON.stringify(p)}${EVENT_END}`).join('');
}

function textChunk(textPart: string, finishReason?: string): Record<string, unknown> {
  return {
    candidates: [
      { content: { parts: [{ text: textPart }], role: 'model' }, index: 0, ...(finishReason ? { finishReason } : {}) },
    ],
    usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 2, totalTokenCount: 7 },
    modelVersion: 'gemini-2.5-flash',
  };
}

let server: FixtureServer;

beforeAll(async () => {
  const json = (status: number, name: string) => (_req: unknown, res: ServerResponse) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8' }).end(fixture(name));
  };
  const stream = (body: string) => async (_req: unknown, res: ServerResponse) => {
    sseHead(res);
    await writeInPieces(res, body);
    res.end();
  };
  server = await startFixtureServer({
    text: stream(TEXT_STREAM),
    call: stream(CALL_STREAM),
    'stream-error': stream(ERROR_STREAM),
    'stream-error-status-only': stream(
      sse(textChunk('Partial'), { error: { message: 'Resource has been exhausted (e.g. check quota).', status: 'RESOURCE_EXHAUSTED' } }),
    ),
    'stream-blocked': stream(sse(JSON.parse(fixture('prompt-blocked.json')))),
    // The finish reason to serve comes from a request header, so one scenario covers the whole mapping table.
    finish: async (req, res) => {
      sseHead(res);
      const reason = String(req.headers['x-test-finish']);
      await writeInPieces(res, sse(textChunk('Some text'), textChunk('', reason)));
      res.end();
    },
    // A repeated finish and a later usage report: the answer ends once, the last usage counts.
    'usage-after-finish': stream(
      sse(textChunk('Done', 'STOP'), {
        ...textChunk('', 'STOP'),
        usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 3, thoughtsTokenCount: 4, toolUsePromptTokenCount: 6 },
      }),
    ),
    // Thought summaries (`thought: true`) streamed before the answer, and a prompt partly read from a cache.
    thoughts: stream(
      sse(
        {
          candidates: [{ content: { parts: [{ text: '**Weighing it**\n\nA short answer.', thought: true }], role: 'model' }, index: 0 }],
          usageMetadata: { promptTokenCount: 40, cachedContentTokenCount: 32, thoughtsTokenCount: 12, totalTokenCount: 52 },
          modelVersion: 'gemini-2.5-flash',
        },
        {
          candidates: [{ content: { parts: [{ text: 'Yes.' }], role: 'model' }, index: 0, finishReason: 'STOP' }],
          usageMetadata: { promptTokenCount: 40, cachedContentTokenCount: 32, candidatesTokenCount: 2, thoughtsTokenCount: 12, totalTokenCount: 54 },
          modelVersion: 'gemini-2.5-flash',
        },
      ),
    ),
    cut: stream(TEXT_HEAD),
    malformed: stream(TEXT_HEAD + 'data: {"candidates":[{"content":{"parts":[{"text":' + EVENT_END),
    'json-array': (_req, res) => {
      const chunks = TEXT_STREAM.split(EVENT_END).filter(Boolean).map((e) => JSON.parse(e.slice('data: '.length)) as unknown);
      res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' }).end(JSON.stringify(chunks));
    },
    completion: json(200, 'generate-content.json'),
    'completion-call': json(200, 'generate-content-function-call.json'),
    'completion-max-tokens': json(200, 'generate-content-max-tokens.json'),
    'completion-safety': json(200, 'generate-content-safety.json'),
    'completion-malformed-call': json(200, 'generate-content-malformed-call.json'),
    'completion-blocked': json(200, 'prompt-blocked.json'),
    'invalid-json': (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"candidates": [');
    },
    'status-400': json(400, 'error-400.json'),
    'status-429': json(429, 'error-429.json'),
    'status-500': json(500, 'error-500.json'),
    'status-503': json(503, 'error-503.json'),
    'status-502-html': (_req, res) => {
      res.writeHead(502, { 'content-type': 'text/html' }).end('<html><body>Bad Gateway</body></html>');
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

function adapter(scenario: string, extra: Partial<GeminiOptions> = {}): ProviderAdapter {
  const baseUrl = server.baseUrl(scenario);
  return createGeminiAdapter({ name: 'gemini', baseUrl, apiKey: 'AIza-test-key', paid: true, ...extra });
}

function call(overrides: Partial<ChatRequest> = {}, signal?: AbortSignal): UpstreamCall {
  return upstreamCall('gemini-2.5-flash', overrides, signal);
}

function lastRequest(): { path: string; headers: Record<string, unknown>; json: Record<string, unknown> } {
  const r = server.requests.at(-1);
  if (!r) throw new Error('no upstream request recorded');
  return { path: r.path, headers: r.headers, json: JSON.parse(r.body) as Record<string, unknown> };
}

/** Sends a request and returns the JSON body the upstream received. */
async function sentBody(overrides: Partial<ChatRequest>, extra: Partial<UpstreamCall> = {}): Promise<Record<string, unknown>> {
  await collect(await adapter('text').stream({ ...call(overrides), ...extra }));
  return lastRequest().json;
}

describe('gemini adapter: request translation', () => {
  it('posts to streamGenerateContent?alt=sse with the key in a header and the exact translated body', async () => {
    const a = adapter('text', { extraHeaders: { 'x-goog-user-project': 'acme' } });
    const options = { stop: 'END', seed: 7, presence_penalty: 0.5, frequency_penalty: -0.25, max_tokens: 99 };
    await collect(await a.stream(call(options)));
    const { path, headers, json } = lastRequest();
    expect(path).toBe('/text/v1/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    expect(path).not.toContain('key=');
    expect(headers['x-goog-api-key']).toBe('AIza-test-key');
    expect(headers['x-goog-user-project']).toBe('acme');
    expect(headers['content-type']).toBe('application/json');
    expect(headers.accept).toBe('text/event-stream');
    expect(headers.authorization).toBeUndefined();
    expect(json).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'Say hello.' }] }],
      systemInstruction: { parts: [{ text: 'You are terse.' }] },
      generationConfig: {
        temperature: 1,
        topP: 1,
        maxOutputTokens: 99,
        stopSequences: ['END'],
        seed: 7,
        presencePenalty: 0.5,
        frequencyPenalty: -0.25,
      },
    });
  });

  it('posts to generateContent for complete(), sends no key header without a key, and accepts a resource name', async () => {
    const tuned = upstreamCall('tunedModels/my-model-7', { stream: false, stop: ['a', 'b'] });
    await adapter('completion', { apiKey: null }).complete(tuned);
    const { path, headers, json } = lastRequest();
    expect(path).toBe('/completion/v1/tunedModels/my-model-7:generateContent');
    expect(headers['x-goog-api-key']).toBeUndefined();
    expect(headers.accept).toBe('application/json');
    expect(json.generationConfig).toEqual({ temperature: 1, topP: 1, maxOutputTokens: 256, stopSequences: ['a', 'b'] });
  });

  it('translates a whole conversation: system and developer, media, tool calls and results, merged turns', async () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'You are terse.' },
      { role: 'developer', content: [{ type: 'text', text: 'Answer in English.' }] },
      {
        role: 'user',
        name: 'alice',
        content: [
          { type: 'text', text: 'What is in these?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'high' } },
          { type: 'image_url', image_url: { url: 'https://example.com/photos/cat.JPG?size=large' } },
          { type: 'image_url', image_url: { url: 'https://example.com/render?id=42' } },
          { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
          { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'a.pdf' } },
          { type: 'file', file: { file_data: 'JVBERi0x', filename: 'report.pdf' } },
        ],
      },
      { role: 'user', content: 'Also, the weather?' },
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } },
          { id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_b', content: '14:02' },
      { role: 'tool', tool_call_id: 'call_a', content: [{ type: 'text', text: '{"temp":' }, { type: 'text', text: '21}' }] },
      { role: 'user', content: 'Thanks.' },
      { role: 'assistant', content: null, refusal: 'I cannot help with that.' },
      { role: 'assistant', content: [{ type: 'text', text: 'Anything else?' }] },
      { role: 'user', content: '' },
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'No.' },
    ];
    const json = await sentBody({ messages });
    expect(json.systemInstruction).toEqual({
      parts: [{ text: 'You are terse.' }, { text: 'Answer in English.' }, { text: 'Be brief.' }],
    });
    expect(json.contents).toEqual([
      {
        role: 'user',
        parts: [
          { text: 'What is in these?' },
          { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
          { fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/photos/cat.JPG?size=large' } },
          { fileData: { fileUri: 'https://example.com/render?id=42' } },
          { inlineData: { mimeType: 'audio/wav', data: 'UklGRg==' } },
          { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } },
          { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0x' } },
          { text: 'Also, the weather?' },
        ],
      },
      {
        role: 'model',
        parts: [
          { text: 'Checking.' },
          {
            functionCall: { id: 'call_a', name: 'get_weather', args: { location: 'Paris' } },
            thoughtSignature: 'skip_thought_signature_validator',
          },
          { functionCall: { id: 'call_b', name: 'get_time', args: {} } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { id: 'call_b', name: 'get_time', response: { output: '14:02' } } },
          { functionResponse: { id: 'call_a', name: 'get_weather', response: { output: '{"temp":21}' } } },
          { text: 'Thanks.' },
        ],
      },
      { role: 'model', parts: [{ text: 'I cannot help with that.' }, { text: 'Anything else?' }] },
      { role: 'user', parts: [{ text: 'No.' }] },
    ]);
  });

  it('names each tool result after the latest earlier call with its id', async () => {
    const callTo = (name: string): ChatMessage => ({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_0', type: 'function', function: { name, arguments: '{}' } }],
    });
    const messages: ChatMessage[] = [
      { role: 'user', content: 'Go.' },
      callTo('first'),
      { role: 'tool', tool_call_id: 'call_0', content: 'one' },
      callTo('second'),
      { role: 'tool', tool_call_id: 'call_0', content: 'two' },
    ];
    const contents = (await sentBody({ messages })).contents as { parts: { functionResponse?: { name: string } }[] }[];
    const names = contents.flatMap((c) => c.parts.flatMap((p) => (p.functionResponse ? [p.functionResponse.name] : [])));
    expect(names).toEqual(['first', 'second']);
  });

  it('sends tools as parametersJsonSchema, untouched, and maps every tool_choice', async () => {
    const parameters = {
      type: 'object',
      properties: { location: { type: 'string' }, unit: { anyOf: [{ const: 'c' }, { const: 'f' }] } },
      required: ['location'],
      additionalProperties: false,
    };
    const tools = [
      { type: 'function' as const, function: { name: 'get_weather', description: 'Weather now', parameters, strict: true } },
      { type: 'function' as const, function: { name: 'get_time' } },
    ];
    const declarations = [
      { name: 'get_weather', description: 'Weather now', parametersJsonSchema: parameters },
      { name: 'get_time' },
    ];
    const cases: [ChatRequest['tool_choice'], unknown][] = [
      [undefined, undefined],
      ['auto', { functionCallingConfig: { mode: 'AUTO' } }],
      ['none', { functionCallingConfig: { mode: 'NONE' } }],
      ['required', { functionCallingConfig: { mode: 'ANY' } }],
      [
        { type: 'function', function: { name: 'get_time' } },
        { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_time'] } },
      ],
    ];
    for (const [choice, expected] of cases) {
      const json = await sentBody({ tools, parallel_tool_calls: false, ...(choice !== undefined ? { tool_choice: choice } : {}) });
      expect(json.tools).toEqual([{ functionDeclarations: declarations }]);
      expect(json.toolConfig).toEqual(expected);
    }
    const without = await sentBody({ tool_choice: 'none' });
    expect(without).not.toHaveProperty('tools');
    expect(without).not.toHaveProperty('toolConfig');
  });

  it('maps response_format to responseMimeType and responseJsonSchema', async () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };
    const jsonSchema = await sentBody({
      response_format: { type: 'json_schema', json_schema: { name: 'answer', schema, strict: true } },
    });
    expect(jsonSchema.generationConfig).toEqual({
      temperature: 1,
      topP: 1,
      maxOutputTokens: 256,
      responseMimeType: 'application/json',
      responseJsonSchema: schema,
    });
    const jsonObject = await sentBody({ response_format: { type: 'json_object' } });
    expect(jsonObject.generationConfig).toMatchObject({ responseMimeType: 'application/json' });
    expect(jsonObject.generationConfig).not.toHaveProperty('responseJsonSchema');
    const plain = await sentBody({ response_format: { type: 'text' }, user: 'u-1', metadata: { team: 'x' }, logit_bias: {} });
    expect(plain.generationConfig).toEqual({ temperature: 1, topP: 1, maxOutputTokens: 256 });
    expect(Object.keys(plain).sort()).toEqual(['contents', 'generationConfig', 'systemInstruction']);
  });

  it('continues a partial answer as a model turn plus the instruction, and yields only the new text', async () => {
    const continuing: UpstreamCall = {
      ...call({ messages: [{ role: 'user', content: 'Say hello.' }] }),
      continuation: { partial: 'Hi there, frie' },
    };
    const events = await collect(await adapter('text').stream(continuing));
    expect(lastRequest().json.contents).toEqual([
      { role: 'user', parts: [{ text: 'Say hello.' }] },
      { role: 'model', parts: [{ text: 'Hi there, frie' }] },
      { role: 'user', parts: [{ text: CONTINUE_INSTRUCTION }] },
    ]);
    expect(text(events)).toBe(TEXT_ANSWER);
  });

  it('refuses what Gemini cannot express with a 400 before calling the upstream', async () => {
    const refusals: [string, Partial<ChatRequest>, string][] = [
      ['logit_bias', { logit_bias: { '50256': -100 } }, 'logit_bias'],
      ['logprobs', { logprobs: true, top_logprobs: 2 }, 'logprobs'],
      [
        'unknown tool_call_id',
        { messages: [{ role: 'user', content: 'x' }, { role: 'tool', tool_call_id: 'call_zz', content: 'r' }] },
        "messages[1].tool_call_id 'call_zz'",
      ],
      [
        'non-http image',
        { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'gs://bucket/cat.png' } }] }] },
        'gs: URLs',
      ],
      [
        'non-base64 data URL',
        { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png,abc' } }] }] },
        'not base64',
      ],
      ['file id', { messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-abc' } }] }] }, 'file ids'],
      [
        'unknown audio format',
        { messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AA==', format: 'opus' } }] }] },
        "'opus'",
      ],
      [
        'invalid tool arguments',
        {
          messages: [
            { role: 'user', content: 'x' },
            {
              role: 'assistant',
              content: null,
              tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{"a":' } }],
            },
          ],
        },
        'messages[1].tool_calls[0].function.arguments',
      ],
      ['nothing to send', { messages: [{ role: 'system', content: 'Only a system prompt.' }] }, 'at least one'],
    ];
    for (const [label, overrides, mention] of refusals) {
      const before = server.requests.length;
      const err = await upstreamFailure(adapter('text').stream(call(overrides)));
      expect(err, label).toMatchObject({ kind: 'unsupported', status: null });
      expect(err.message, label).toContain(mention);
      expect(server.requests.length, label).toBe(before);
    }
  });
});

describe('gemini adapter: complete', () => {
  it('parses an answer, the thought summary as reasoning_content beside it, thinking counted as completion and reasoning tokens', async () => {
    const result = await adapter('completion').complete(call({ stream: false }));
    expect(result).toEqual({
      message: {
        role: 'assistant',
        content: 'Hello! How can I help you today?',
        reasoning_content: '**Greeting the user**\n\nThe user said hello; a short, friendly reply fits.',
      },
      finishReason: 'stop',
      // 9 answer + 130 thinking (thoughtsTokenCount, billed as output, not in candidatesTokenCount; total 147).
      usage: { promptTokens: 8, completionTokens: 139, reasoningTokens: 130 },
      model: 'gemini-2.5-flash',
    });
  });

  it('parses function calls into tool calls with stable ids and JSON arguments', async () => {
    const first = await adapter('completion-call').complete(call({ stream: false }));
    expect(first.finishReason).toBe('tool_calls');
    expect(first.message.content).toBeNull();
    expect(first.message.tool_calls).toEqual([
      {
        id: 'call_m36LaZGyCLz1xs0PtNSB-QU_0',
        type: 'function',
        function: { name: 'get_weather', arguments: '{"location":"Paris, France"}' },
      },
      {
        id: 'call_m36LaZGyCLz1xs0PtNSB-QU_1',
        type: 'function',
        function: { name: 'get_weather', arguments: '{"location":"Tokyo, Japan","unit":"celsius"}' },
      },
    ]);
    // 30 candidates + 88 thinking (total 179).
    expect(first.usage).toEqual({ promptTokens: 61, completionTokens: 118, reasoningTokens: 88 });
    const again = await adapter('completion-call').complete(call({ stream: false }));
    expect(again.message.tool_calls?.map((t) => t.id)).toEqual(first.message.tool_calls?.map((t) => t.id));
  });

  it('maps MAX_TOKENS to length and SAFETY to content_filter', async () => {
    const cut = await adapter('completion-max-tokens').complete(call({ stream: false }));
    expect(cut).toMatchObject({ finishReason: 'length', message: { content: 'The history of the printing press begins in' } });
    // 8 candidates + 16 thinking (total 35).
    expect(cut.usage).toEqual({ promptTokens: 11, completionTokens: 24, reasoningTokens: 16 });
    const filtered = await adapter('completion-safety').complete(call({ stream: false }));
    expect(filtered).toEqual({
      message: { role: 'assistant', content: '' },
      finishReason: 'content_filter',
      // No candidatesTokenCount nor thoughtsTokenCount: proto3 JSON leaves zero counts out, so none were spent.
      usage: { promptTokens: 14, completionTokens: 0, reasoningTokens: 0 },
      model: 'gemini-2.0-flash',
    });
  });

  it('fails a malformed function call as a retryable protocol error', async () => {
    const err = await upstreamFailure(adapter('completion-malformed-call').complete(call({ stream: false })));
    expect(err).toMatchObject({ kind: 'protocol', retryable: true });
    expect(err.message).toContain('MALFORMED_FUNCTION_CALL');
  });

  it('turns a blocked prompt into a 400 that names the reason', async () => {
    const err = await upstreamFailure(adapter('completion-blocked').complete(call({ stream: false })));
    expect(err).toMatchObject({ kind: 'http', status: 400, retryable: false });
    expect(err.message).toContain('PROHIBITED_CONTENT');
  });

  it('refuses an invalid JSON body as a protocol error', async () => {
    const err = await upstreamFailure(adapter('invalid-json').complete(call({ stream: false })));
    expect(err.kind).toBe('protocol');
    expect(err.message).toContain('invalid JSON');
  });
});

describe('gemini adapter: streams', () => {
  it('decodes a CRLF-framed stream read in odd pieces, with running usage and the final usage last', async () => {
    expect(TEXT_STREAM).toContain(EVENT_END);
    expect(TEXT_STREAM.replace(/\r\n/g, '')).not.toContain('\n');
    const events = await collect(await adapter('text').stream(call()));
    expect(text(events)).toBe(TEXT_ANSWER);
    expect(deltas(events)[0]).toEqual({ delta: { role: 'assistant', content: 'Hello! How' }, finishReason: null });
    expect(finishReasons(events)).toEqual(['stop']);
    // Running totals as they change (charged if the client leaves mid-answer), then the final one, last:
    // 10 candidates + 24 thinking (total 43).
    expect(usages(events).at(-1)).toEqual({ promptTokens: 9, completionTokens: 34, reasoningTokens: 24 });
    expect(events.at(-1)?.type).toBe('usage');
  });

  it('relays function calls whole, numbered across the stream, and finishes with tool_calls', async () => {
    const events = await collect(await adapter('call').stream(call()));
    expect(text(events)).toBe('Let me check the weather in both cities.');
    const calls = deltas(events).flatMap((d) => d.delta.tool_calls ?? []);
    expect(calls).toEqual([
      {
        index: 0,
        id: 'call_QHiLaa6LBrb8vdIPoNztsAg_0',
        type: 'function',
        function: { name: 'get_weather', arguments: '{"location":"Paris, France"}' },
      },
      {
        index: 1,
        id: 'call_QHiLaa6LBrb8vdIPoNztsAg_1',
        type: 'function',
        function: { name: 'get_weather', arguments: '{"location":"Tokyo, Japan","unit":"celsius"}' },
      },
    ]);
    expect(finishReasons(events)).toEqual(['tool_calls']);
    // 27 candidates + 88 thinking (total 176).
    expect(usages(events).at(-1)).toEqual({ promptTokens: 61, completionTokens: 115, reasoningTokens: 88 });
  });

  it('maps every finish reason', async () => {
    const table: [string, string][] = [
      ['STOP', 'stop'],
      ['MAX_TOKENS', 'length'],
      ['SAFETY', 'content_filter'],
      ['RECITATION', 'content_filter'],
      ['BLOCKLIST', 'content_filter'],
      ['PROHIBITED_CONTENT', 'content_filter'],
      ['SPII', 'content_filter'],
      ['LANGUAGE', 'content_filter'],
      ['IMAGE_SAFETY', 'content_filter'],
      ['OTHER', 'stop'],
      ['A_REASON_FROM_THE_FUTURE', 'stop'],
    ];
    for (const [gemini, openai] of table) {
      const events = await collect(await adapter('finish', { extraHeaders: { 'x-test-finish': gemini } }).stream(call()));
      expect(finishReasons(events), gemini).toEqual([openai]);
      expect(text(events), gemini).toBe('Some text');
    }
    for (const failed of ['MALFORMED_FUNCTION_CALL', 'UNEXPECTED_TOOL_CALL', 'TOO_MANY_TOOL_CALLS']) {
      const events = await adapter('finish', { extraHeaders: { 'x-test-finish': failed } }).stream(call());
      const err = await upstreamFailure(collect(events));
      expect(err, failed).toMatchObject({ kind: 'protocol', retryable: true });
      expect(err.message, failed).toContain(failed);
    }
  });

  it('ends at the first finish and reports the last usage, with tool-use prompt tokens', async () => {
    const events = await collect(await adapter('usage-after-finish').stream(call()));
    expect(finishReasons(events)).toEqual(['stop']);
    // Prompt 5 + 6 tool-use prompt; completion 3 + 4 thinking.
    expect(usages(events)).toEqual([{ promptTokens: 11, completionTokens: 7, reasoningTokens: 4 }]);
  });

  it('raises an error object inside the stream as an http error with its code, so failover can act', async () => {
    const seen: string[] = [];
    const iterate = async (): Promise<void> => {
      for await (const e of eachEvent(await adapter('stream-error').stream(call()))) {
        if (e.type === 'delta') seen.push(e.delta.content ?? '');
      }
    };
    const err = await upstreamFailure(iterate());
    expect(seen.join('')).toBe('Once upon a time');
    expect(err).toMatchObject({ kind: 'http', status: 503, retryable: true });
    expect(err.message).toContain('UNAVAILABLE: The model is overloaded');
  });

  it('takes the status from the error name when the in-stream error has no numeric code', async () => {
    const err = await upstreamFailure(collect(await adapter('stream-error-status-only').stream(call())));
    expect(err).toMatchObject({ kind: 'http', status: 429, retryable: true });
  });

  it('turns a blocked prompt in a stream into a 400', async () => {
    const err = await upstreamFailure(collect(await adapter('stream-blocked').stream(call())));
    expect(err).toMatchObject({ kind: 'http', status: 400, retryable: false });
    expect(err.message).toContain('PROHIBITED_CONTENT');
  });

  it('fails a stream that ends before any finishReason', async () => {
    const err = await upstreamFailure(collect(await adapter('cut').stream(call())));
    expect(err.kind).toBe('protocol');
    expect(err.message).toContain('ended early');
  });

  it('fails a malformed chunk as a protocol error', async () => {
    const err = await upstreamFailure(collect(await adapter('malformed').stream(call())));
    expect(err.kind).toBe('protocol');
    expect(err.message).toContain('malformed stream chunk');
  });

  it('fails a connection reset mid-stream as a retryable connect error', async () => {
    const err = await upstreamFailure(collect(await adapter('reset-mid').stream(call())));
    expect(err).toMatchObject({ kind: 'connect', retryable: true });
  });

  it('reads the JSON array Gemini sends when alt=sse is not honoured', async () => {
    const events = await collect(await adapter('json-array').stream(call()));
    expect(text(events)).toBe(TEXT_ANSWER);
    expect(finishReasons(events)).toEqual(['stop']);
    expect(usages(events).at(-1)).toEqual({ promptTokens: 9, completionTokens: 34, reasoningTokens: 24 });
  });

  it('relays thought summaries as reasoning_content deltas, never as content, and the cached part of the prompt', async () => {
    const events = await collect(await adapter('thoughts').stream(call()));
    expect(deltas(events)).toEqual([
      { delta: { role: 'assistant', reasoning_content: '**Weighing it**\n\nA short answer.' }, finishReason: null },
      { delta: { content: 'Yes.' }, finishReason: 'stop' },
    ]);
    expect(text(events)).toBe('Yes.');
    expect(reasoning(events)).toBe('**Weighing it**\n\nA short answer.');
    // The running total while it thinks (12 thinking tokens already billed), then the final one: 2 + 12.
    // cachedContentTokenCount is part of promptTokenCount, so 32 of the 40.
    expect(usages(events)).toEqual([
      { promptTokens: 40, completionTokens: 12, cachedTokens: 32, reasoningTokens: 12 },
      { promptTokens: 40, completionTokens: 14, cachedTokens: 32, reasoningTokens: 12 },
    ]);
  });
});

describe('gemini adapter: error statuses', () => {
  it("maps Gemini's bad-key 400 (API_KEY_INVALID) to a 401: the operator's credentials, so failover goes on", async () => {
    const err = await upstreamFailure(adapter('status-400').stream(call()));
    // 401 is not a request refusal (only 400/413/422 stop failover) and counts against the target's health.
    expect(err).toMatchObject({ kind: 'http', status: 401 });
    expect(err.message).toContain('INVALID_ARGUMENT: API key not valid');
  });

  it('maps 429, 500 and 503 to retryable http errors', async () => {
    const cases: [string, number, string][] = [
      ['status-429', 429, 'RESOURCE_EXHAUSTED: You exceeded your current quota'],
      ['status-500', 500, 'INTERNAL: An internal error has occurred'],
      ['status-503', 503, 'UNAVAILABLE: The model is overloaded'],
    ];
    for (const [scenario, status, message] of cases) {
      const streamed = await upstreamFailure(adapter(scenario).stream(call()));
      expect(streamed, scenario).toMatchObject({ kind: 'http', status, retryable: true });
      expect(streamed.message, scenario).toContain(message);
      const completed = await upstreamFailure(adapter(scenario).complete(call({ stream: false })));
      expect(completed, scenario).toMatchObject({ kind: 'http', status, retryable: true });
    }
  });

  it('uses the body text when the error is not an envelope', async () => {
    const err = await upstreamFailure(adapter('status-502-html').stream(call()));
    expect(err).toMatchObject({ kind: 'http', status: 502, retryable: true });
    expect(err.message).toContain('Bad Gateway');
  });

  it('maps a refused connection to a retryable connect error', async () => {
    const port = await closedPort();
    const a = createGeminiAdapter({ name: 'g', baseUrl: `http://127.0.0.1:${port}/v1beta`, apiKey: 'k', paid: true });
    const err = await upstreamFailure(a.stream(call()));
    expect(err).toMatchObject({ kind: 'connect', retryable: true });
    expect(err.message).toContain('ECONNREFUSED');
  });
});

describe('gemini adapter: cancellation', () => {
  it('stops on abort with an aborted error and closes the upstream connection', async () => {
    const controller = new AbortController();
    const events = await adapter('hold').stream(call({}, controller.signal));
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
    const err = await upstreamFailure(collect(await adapter('hold').stream(call({}, AbortSignal.timeout(150)))));
    expect(err).toMatchObject({ kind: 'timeout', retryable: true });
  });

  it('rejects at once when the signal already fired', async () => {
    const controller = new AbortController();
    controller.abort();
    const err = await upstreamFailure(adapter('text').stream(call({}, controller.signal)));
    expect(err.kind).toBe('aborted');
  });

  it('closes the upstream connection when the consumer breaks out', async () => {
    const events = await adapter('hold').stream(call());
    const request = server.requests.at(-1);
    for await (const e of events) {
      void e;
      break;
    }
    await within(request?.connectionClosed ?? Promise.reject(new Error('no request')), 2000, 'upstream connection to close');
  });

  it('closes the upstream connection when the stream is given up before iterating', async () => {
    const events = await adapter('hold').stream(call());
    const request = server.requests.at(-1);
    await events[Symbol.asyncIterator]().return?.();
    await within(request?.connectionClosed ?? Promise.reject(new Error('no request')), 2000, 'upstream connection to close');
  });
});
