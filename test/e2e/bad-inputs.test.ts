/**
 * A corpus of bad requests, each answered with the documented status and OpenAI error envelope
 * (docs/errors.md), an `x-request-id` header, and no effect on the account: after the whole corpus the
 * balance, the pending holds and the key list are exactly as before.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/keys/key-format.js';
import type { Balance } from '../../src/store/types.js';
import { startTestGateway, type Seeded, type TestGateway } from '../helpers/gateway.js';

const DAY_MS = 86_400_000;

let gw: TestGateway;
let seeded: Seeded;
let before: Balance;
let keysBefore: number;

beforeAll(async () => {
  gw = await startTestGateway();
  // Enough for small requests, too little for a worst case of svc-smart with a huge max_tokens.
  seeded = await gw.seed({ purchased: 3_000, earned: [{ amount: 2_000, expiresAt: Date.now() + 30 * DAY_MS }] });
  before = await gw.store.ledger.balance(seeded.accountId, 'live');
  keysBefore = (await gw.store.keys.listActiveKeys(seeded.accountId)).length;
});
afterAll(() => gw.close());

type Secret = string | null | { header: string };

interface Case {
  name: string;
  method?: 'GET' | 'POST' | 'DELETE';
  /** Relative to /v1; default /chat/completions. */
  path?: string;
  /** JSON-encoded unless `raw` is set. */
  body?: unknown;
  raw?: string;
  /** Default: the seeded key. null: no Authorization header. */
  auth?: Secret | (() => Secret);
  status: number;
  /** One code, or the acceptable ones when the docs leave room. */
  code: string | string[];
  /** Exact param (null = must be null); a RegExp to match; undefined = not checked. */
  param?: string | null | RegExp;
}

const U = [{ role: 'user', content: 'hi' }];
const chat = (extra: Record<string, unknown>): Record<string, unknown> => ({ model: 'svc-fast', messages: U, ...extra });
const msg = (m: unknown): Record<string, unknown> => ({ model: 'svc-fast', messages: [m] });
const tool = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } };

const TYPE_OF_STATUS: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'insufficient_quota',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'invalid_request_error',
};

const chatCases: Case[] = [
  // Body framing.
  { name: 'truncated JSON', raw: '{"model":"svc-fast","messages":[{"role":"user","content":"hi"}', status: 400, code: 'invalid_json', param: null },
  { name: 'JSON with a trailing comma', raw: '{"model":"svc-fast","messages":[{"role":"user","content":"hi"}],}', status: 400, code: 'invalid_json', param: null },
  { name: 'plain text body', raw: 'please complete: hello', status: 400, code: 'invalid_json', param: null },
  { name: 'single-quoted pseudo JSON', raw: "{'model':'svc-fast'}", status: 400, code: 'invalid_json', param: null },
  { name: 'empty body', raw: '', status: 400, code: 'invalid_json', param: null },
  { name: 'whitespace-only body', raw: ' \n\t ', status: 400, code: 'invalid_json', param: null },
  { name: 'JSON array body', body: [chat({})], status: 400, code: 'invalid_body', param: null },
  { name: 'JSON number body', raw: '42', status: 400, code: 'invalid_body', param: null },
  { name: 'JSON null body', raw: 'null', status: 400, code: 'invalid_body', param: null },
  { name: 'JSON string body', raw: '"svc-fast"', status: 400, code: 'invalid_body', param: null },
  // model
  { name: 'missing model', body: { messages: U }, status: 400, code: 'missing_required_parameter', param: 'model' },
  { name: 'model is a number', body: { model: 42, messages: U }, status: 400, code: 'invalid_type', param: 'model' },
  { name: 'model is an empty string', body: { model: '', messages: U }, status: 400, code: 'invalid_value', param: 'model' },
  { name: 'unknown model', body: { model: 'gpt-4o', messages: U }, status: 404, code: 'model_not_found', param: 'model' },
  // messages
  { name: 'missing messages', body: { model: 'svc-fast' }, status: 400, code: 'missing_required_parameter', param: 'messages' },
  { name: 'messages is a string', body: { model: 'svc-fast', messages: 'hi' }, status: 400, code: 'invalid_type', param: 'messages' },
  { name: 'messages is an object', body: { model: 'svc-fast', messages: { role: 'user', content: 'hi' } }, status: 400, code: 'invalid_type', param: 'messages' },
  { name: 'empty messages', body: { model: 'svc-fast', messages: [] }, status: 400, code: 'invalid_value', param: 'messages' },
  { name: 'a message that is a string', body: msg('hi'), status: 400, code: 'invalid_type', param: 'messages[0]' },
  { name: 'message without role', body: msg({ content: 'hi' }), status: 400, code: 'missing_required_parameter', param: 'messages[0].role' },
  { name: "unknown role 'bot'", body: msg({ role: 'bot', content: 'hi' }), status: 400, code: 'invalid_value', param: 'messages[0].role' },
  {
    name: 'unknown role in the third message',
    body: { model: 'svc-fast', messages: [...U, { role: 'assistant', content: 'yo' }, { role: 'human', content: 'x' }] },
    status: 400,
    code: 'invalid_value',
    param: 'messages[2].role',
  },
  { name: 'role is a number', body: msg({ role: 5, content: 'hi' }), status: 400, code: 'invalid_type', param: 'messages[0].role' },
  { name: 'user message without content', body: msg({ role: 'user' }), status: 400, code: 'missing_required_parameter', param: 'messages[0].content' },
  { name: 'content is a number', body: msg({ role: 'user', content: 5 }), status: 400, code: 'invalid_type', param: 'messages[0].content' },
  { name: 'content is an empty array', body: msg({ role: 'user', content: [] }), status: 400, code: 'invalid_value', param: 'messages[0].content' },
  {
    name: 'content part of unknown type',
    body: msg({ role: 'user', content: [{ type: 'video', video: 'x' }] }),
    status: 400,
    code: 'invalid_value',
    param: 'messages[0].content[0].type',
  },
  {
    name: 'image part without url',
    body: msg({ role: 'user', content: [{ type: 'text', text: 'what is this?' }, { type: 'image_url', image_url: {} }] }),
    status: 400,
    code: 'missing_required_parameter',
    param: 'messages[0].content[1].image_url.url',
  },
  { name: 'unknown field inside a message', body: msg({ role: 'user', content: 'hi', mood: 'happy' }), status: 400, code: 'unrecognized_argument', param: 'messages[0].mood' },
  { name: 'tool message without tool_call_id', body: msg({ role: 'tool', content: '{"t":20}' }), status: 400, code: 'missing_required_parameter', param: 'messages[0].tool_call_id' },
  {
    name: 'assistant message without content or tool_calls',
    body: { model: 'svc-fast', messages: [...U, { role: 'assistant' }] },
    status: 400,
    code: ['invalid_value', 'missing_required_parameter'],
    param: 'messages[1].content',
  },
  // sampling and limits
  { name: 'temperature -0.1', body: chat({ temperature: -0.1 }), status: 400, code: 'invalid_value', param: 'temperature' },
  { name: 'temperature 2.01', body: chat({ temperature: 2.01 }), status: 400, code: 'invalid_value', param: 'temperature' },
  { name: "temperature '0.5' (a string)", body: chat({ temperature: '0.5' }), status: 400, code: 'invalid_type', param: 'temperature' },
  { name: 'top_p 1.5', body: chat({ top_p: 1.5 }), status: 400, code: 'invalid_value', param: 'top_p' },
  { name: 'max_tokens 0', body: chat({ max_tokens: 0 }), status: 400, code: 'invalid_value', param: 'max_tokens' },
  { name: 'max_tokens -5', body: chat({ max_tokens: -5 }), status: 400, code: 'invalid_value', param: 'max_tokens' },
  // 1.5 is a number but not an integer: either code is defensible, "missing" is not.
  { name: 'max_tokens 1.5', body: chat({ max_tokens: 1.5 }), status: 400, code: ['invalid_type', 'invalid_value'], param: 'max_tokens' },
  { name: "max_tokens 'ten'", body: chat({ max_tokens: 'ten' }), status: 400, code: 'invalid_type', param: 'max_tokens' },
  {
    name: 'max_tokens and max_completion_tokens disagree',
    body: chat({ max_tokens: 10, max_completion_tokens: 20 }),
    status: 400,
    code: 'invalid_value',
    param: 'max_tokens',
  },
  { name: "stream 'yes'", body: chat({ stream: 'yes' }), status: 400, code: 'invalid_type', param: 'stream' },
  { name: 'stream_options with stream false', body: chat({ stream: false, stream_options: { include_usage: true } }), status: 400, code: 'invalid_value', param: 'stream_options' },
  { name: 'stream_options without stream', body: chat({ stream_options: { include_usage: true } }), status: 400, code: 'invalid_value', param: 'stream_options' },
  { name: 'n 2', body: chat({ n: 2 }), status: 400, code: 'unsupported_value', param: 'n' },
  { name: 'unknown top-level field', body: chat({ frobnicate: true }), status: 400, code: 'unrecognized_argument', param: 'frobnicate' },
  {
    name: 'deprecated functions',
    body: chat({ functions: [{ name: 'f', parameters: { type: 'object' } }] }),
    status: 400,
    code: 'unsupported_parameter',
    param: 'functions',
  },
  { name: 'deprecated function_call', body: chat({ function_call: 'auto' }), status: 400, code: 'unsupported_parameter', param: 'function_call' },
  { name: 'audio output', body: chat({ audio: { voice: 'alloy', format: 'mp3' } }), status: 400, code: 'unsupported_parameter', param: 'audio' },
  {
    name: 'tools with a bad function name',
    body: chat({ tools: [{ type: 'function', function: { name: 'get weather!' } }] }),
    status: 400,
    code: 'invalid_value',
    param: 'tools[0].function.name',
  },
  { name: 'tool_choice required without tools', body: chat({ tool_choice: 'required' }), status: 400, code: 'invalid_value', param: 'tool_choice' },
  {
    name: 'tool_choice naming a missing function',
    body: chat({ tools: [tool], tool_choice: { type: 'function', function: { name: 'get_time' } } }),
    status: 400,
    code: 'invalid_value',
    param: 'tool_choice.function.name',
  },
  {
    name: 'allowed_tools naming a missing function',
    body: chat({ tools: [tool], tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [{ type: 'function', function: { name: 'get_time' } }] } } }),
    status: 400,
    code: 'invalid_value',
    param: 'tool_choice.allowed_tools.tools',
  },
  // OpenAI's API takes these; no target of the gateway can serve them: unsupported, naming the part.
  { name: 'a custom tool', body: chat({ tools: [tool, { type: 'custom', custom: { name: 'sql' } }] }), status: 400, code: 'unsupported_parameter', param: 'tools[1]' },
  { name: 'tool_choice custom', body: chat({ tools: [tool], tool_choice: { type: 'custom', custom: { name: 'sql' } } }), status: 400, code: 'unsupported_parameter', param: 'tool_choice' },
  {
    name: 'a role function message',
    body: { model: 'svc-fast', messages: [{ role: 'user', content: 'hi' }, { role: 'function', name: 'f', content: '{}' }] },
    status: 400,
    code: 'unsupported_parameter',
    param: 'messages[1].role',
  },
  {
    name: 'an assistant message with stored audio',
    body: { model: 'svc-fast', messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', audio: { id: 'audio_1' } }, { role: 'user', content: 'again' }] },
    status: 400,
    code: 'unsupported_parameter',
    param: 'messages[1].audio',
  },
  {
    name: 'an assistant custom tool call',
    body: {
      model: 'svc-fast',
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', tool_calls: [{ id: 'c1', type: 'custom', custom: { name: 'sql', input: 'select 1' } }] },
        { role: 'user', content: 'again' },
      ],
    },
    status: 400,
    code: 'unsupported_parameter',
    param: 'messages[1].tool_calls[0]',
  },
  // Up to 16 are taken (each target gets as many as it takes: src/providers/target-params.ts); 17 is too many.
  { name: 'stop with 17 strings', body: chat({ stop: Array.from({ length: 17 }, (_, i) => `s${i}`) }), status: 400, code: 'invalid_value', param: 'stop' },
  { name: 'presence_penalty 3', body: chat({ presence_penalty: 3 }), status: 400, code: 'invalid_value', param: 'presence_penalty' },
  { name: 'logit_bias with a non-numeric key', body: chat({ logit_bias: { hello: 5 } }), status: 400, code: 'invalid_value', param: /^logit_bias/ },
  { name: 'top_logprobs without logprobs', body: chat({ top_logprobs: 3 }), status: 400, code: 'invalid_value', param: 'top_logprobs' },
  {
    name: 'response_format of unknown type',
    body: chat({ response_format: { type: 'yaml' } }),
    status: 400,
    code: 'invalid_value',
    param: 'response_format.type',
  },
  // context window
  {
    name: 'max_tokens larger than the context window',
    body: chat({ max_tokens: 64_000 }),
    status: 400,
    code: 'context_length_exceeded',
    param: 'max_tokens',
  },
  {
    name: 'max_tokens beyond svc-smart 128k window',
    body: { model: 'svc-smart', messages: U, max_tokens: 200_000 },
    status: 400,
    code: 'context_length_exceeded',
    param: 'max_tokens',
  },
  {
    name: 'prompt of ~200k characters on svc-fast (64k context)',
    body: msg({ role: 'user', content: 'lorem ipsum dolor sit amet '.repeat(7_500) }),
    status: 400,
    code: 'context_length_exceeded',
    param: 'messages',
  },
  // size and credits
  {
    name: 'body over 10 MiB',
    raw: JSON.stringify(msg({ role: 'user', content: 'x'.repeat(10 * 1024 * 1024 + 16) })),
    status: 413,
    code: 'request_too_large',
    param: null,
  },
  {
    name: 'worst case above the balance (402, nothing held)',
    body: { model: 'svc-smart', messages: U, max_tokens: 100_000 },
    status: 402,
    code: 'insufficient_credits',
  },
];

const authCases: Case[] = [
  { name: 'no Authorization header', body: chat({}), auth: null, status: 401, code: 'missing_api_key', param: null },
  { name: "'Bearer' alone", body: chat({}), auth: { header: 'Bearer' }, status: 401, code: 'invalid_api_key', param: null },
  { name: "'Bearer' with garbage", body: chat({}), auth: { header: 'Bearer %%%not-a-key%%%' }, status: 401, code: 'invalid_api_key', param: null },
  { name: 'Basic scheme', body: chat({}), auth: { header: 'Basic dXNlcjpwYXNz' }, status: 401, code: 'invalid_api_key', param: null },
  { name: 'an OpenAI-style key', body: chat({}), auth: 'sk-proj-abcdefghijklmnopqrstuvwxyz', status: 401, code: 'invalid_api_key', param: null },
  {
    name: 'well-formed key with a bad checksum',
    body: chat({}),
    auth: () => {
      const s = seeded.secret;
      const last = s.at(-1) === 'A' ? 'B' : 'A';
      return s.slice(0, -1) + last;
    },
    status: 401,
    code: 'invalid_api_key',
    param: null,
  },
  {
    name: 'seeded key with the environment prefix swapped',
    body: chat({}),
    auth: () => seeded.secret.replace('svc_live_', 'svc_test_'),
    status: 401,
    code: 'invalid_api_key',
    param: null,
  },
  { name: 'valid-format key for an unknown id', body: chat({}), auth: () => generateKey('live').secret, status: 401, code: 'invalid_api_key', param: null },
  { name: 'unknown key on GET /v1/models', method: 'GET', path: '/models', auth: () => generateKey('test').secret, status: 401, code: 'invalid_api_key', param: null },
  { name: 'no key on GET /v1/credits', method: 'GET', path: '/credits', auth: null, status: 401, code: 'missing_api_key', param: null },
];

const usageCases: Case[] = [
  { name: 'start_date 2026-13-01', method: 'GET', path: '/usage?start_date=2026-13-01', status: 400, code: 'invalid_date', param: 'start_date' },
  { name: 'start_date 2026-02-30', method: 'GET', path: '/usage?start_date=2026-02-30', status: 400, code: 'invalid_date', param: 'start_date' },
  { name: "start_date 'yesterday'", method: 'GET', path: '/usage?start_date=yesterday', status: 400, code: 'invalid_date', param: 'start_date' },
  { name: 'end_date 2026-1-5 (not zero-padded)', method: 'GET', path: '/usage?end_date=2026-1-5', status: 400, code: 'invalid_date', param: 'end_date' },
  {
    name: 'end_date before start_date',
    method: 'GET',
    path: '/usage?start_date=2026-03-10&end_date=2026-03-09',
    status: 400,
    code: 'invalid_date_range',
  },
  {
    name: 'range of 367 days',
    method: 'GET',
    path: '/usage?start_date=2025-01-01&end_date=2026-01-02',
    status: 400,
    code: 'invalid_date_range',
  },
  { name: 'usage for an unknown model', method: 'GET', path: '/usage?model=gpt-4o', status: 400, code: 'invalid_value', param: 'model' },
  { name: 'usage with an unknown query parameter', method: 'GET', path: '/usage?group_by=day', status: 400, code: 'unrecognized_argument', param: 'group_by' },
];

const apiKeyCases: Case[] = [
  { name: 'api-keys: daily_credit_limit 0', method: 'POST', path: '/api-keys', body: { daily_credit_limit: 0 }, status: 400, code: 'invalid_value', param: 'daily_credit_limit' },
  { name: 'api-keys: daily_credit_limit -1', method: 'POST', path: '/api-keys', body: { daily_credit_limit: -1 }, status: 400, code: 'invalid_value', param: 'daily_credit_limit' },
  { name: "api-keys: daily_credit_limit 'x'", method: 'POST', path: '/api-keys', body: { daily_credit_limit: 'x' }, status: 400, code: 'invalid_type', param: 'daily_credit_limit' },
  { name: "api-keys: environment 'prod'", method: 'POST', path: '/api-keys', body: { environment: 'prod' }, status: 400, code: 'invalid_value', param: 'environment' },
  { name: 'api-keys: unknown field', method: 'POST', path: '/api-keys', body: { name: 'ci', scopes: ['all'] }, status: 400, code: 'unrecognized_argument', param: 'scopes' },
  { name: 'api-keys: malformed JSON', method: 'POST', path: '/api-keys', raw: '{"name":', status: 400, code: 'invalid_json', param: null },
  { name: 'api-keys: JSON array body', method: 'POST', path: '/api-keys', body: [{ name: 'x' }], status: 400, code: 'invalid_body', param: null },
];

const otherCases: Case[] = [
  { name: 'GET /v1/models/nope', method: 'GET', path: '/models/nope', status: 404, code: 'model_not_found', param: 'model' },
  { name: 'unknown endpoint', method: 'POST', path: '/edits', body: { model: 'svc-fast', input: 'hi' }, status: 404, code: 'unknown_endpoint' },
  { name: 'DELETE an unknown key id', method: 'DELETE', path: '/api-keys/key_000000000000', status: 404, code: 'api_key_not_found', param: 'id' },
];

async function send(c: Case): Promise<Response> {
  const method = c.method ?? 'POST';
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const auth = typeof c.auth === 'function' ? c.auth() : c.auth === undefined ? seeded.secret : c.auth;
  if (typeof auth === 'string') headers.authorization = `Bearer ${auth}`;
  else if (auth !== null) headers.authorization = auth.header;
  const init: RequestInit = { method, headers };
  if (c.raw !== undefined) init.body = c.raw;
  else if (c.body !== undefined) init.body = JSON.stringify(c.body);
  return fetch(`${gw.url}${c.path ?? '/chat/completions'}`, init);
}

async function check(c: Case): Promise<void> {
  const res = await send(c);
  const text = await res.text();
  const why = `${c.name}: ${res.status} ${text.slice(0, 400)}`;
  expect(res.headers.get('x-request-id'), 'x-request-id header').toMatch(/^req_/);
  expect(res.headers.get('content-type'), why).toMatch(/^application\/json/);
  expect(res.status, why).toBe(c.status);
  const body = JSON.parse(text) as unknown;
  // Exactly the envelope: one `error` key holding exactly message, type, param, code.
  expect(Object.keys(body as object), why).toEqual(['error']);
  const err = (body as { error: Record<string, unknown> }).error;
  expect(Object.keys(err).sort(), why).toEqual(['code', 'message', 'param', 'type']);
  expect(typeof err.message, why).toBe('string');
  expect((err.message as string).length, why).toBeGreaterThan(0);
  expect(err.type, why).toBe(TYPE_OF_STATUS[c.status]);
  expect(err.param === null || typeof err.param === 'string', why).toBe(true);
  if (Array.isArray(c.code)) expect(c.code, why).toContain(err.code);
  else expect(err.code, why).toBe(c.code);
  if (c.param instanceof RegExp) expect(err.param, why).toMatch(c.param);
  else if (c.param !== undefined) expect(err.param, why).toBe(c.param);
}

describe('bad requests are refused with the documented envelope', () => {
  describe('POST /v1/chat/completions', () => {
    for (const c of chatCases) it(c.name, () => check(c));
  });
  describe('authentication', () => {
    for (const c of authCases) it(c.name, () => check(c));
  });
  describe('GET /v1/usage', () => {
    for (const c of usageCases) it(c.name, () => check(c));
  });
  describe('POST /v1/api-keys', () => {
    for (const c of apiKeyCases) it(c.name, () => check(c));
  });
  describe('other endpoints', () => {
    for (const c of otherCases) it(c.name, () => check(c));
  });

  it('a client-sent x-request-id is echoed on an error', async () => {
    const res = await fetch(`${gw.url}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${seeded.secret}`, 'x-request-id': 'trace-123.abc' },
      body: 'nope',
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('x-request-id')).toBe('trace-123.abc');
  });

  // Runs last (vitest runs a file's tests in order): the whole corpus left no trace.
  it('left the balance, the pending holds and the keys unchanged', async () => {
    expect(await gw.store.ledger.balance(seeded.accountId, 'live')).toEqual(before);
    expect(await gw.store.ledger.balance(seeded.accountId, 'test')).toMatchObject({ earned: 0, purchased: 0, reserved: 0 });
    expect(await gw.store.ledger.countPendingHolds(seeded.accountId)).toBe(0);
    expect(await gw.store.ledger.countPendingHolds()).toBe(0);
    expect((await gw.store.keys.listActiveKeys(seeded.accountId)).length).toBe(keysBefore);
  });
});

it('corpus size', () => {
  expect(chatCases.length).toBeGreaterThanOrEqual(40);
  expect(chatCases.length + authCases.length + usageCases.length + apiKeyCases.length + otherCases.length).toBeGreaterThanOrEqual(70);
});
