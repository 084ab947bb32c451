/**
 * The OpenAI Responses door (`POST /v1/responses`, `GET` and `DELETE /v1/responses/{id}`, src/http/responses.ts
 * and src/responses/) with the real clients, unmodified but for base URL and key: the `openai` node client's
 * `responses.create` / `responses.stream`, and the Vercel AI SDK's default `createOpenAI(...)(alias)` (which
 * is a Responses model). A real gateway (real HTTP, real SQLite) routes to real local upstreams:
 *
 * - `svc-fast`: the recording OpenAI-compatible upstream `gpt-4o-mini` (test/helpers/recording-upstream/),
 *   which decides its answer from the request alone and records what it received, so each test reads the
 *   expected text, tool call and usage from the recording, and checks the chat request the door built;
 * - `svc-code`: a scripted upstream that always streams the same short answer, for the byte-level fixture;
 * - `svc-smart`: an upstream that dies mid-stream, the only target of its alias.
 *
 * What is proven: the response object's shape and usage; the event sequence of a stream (types, order,
 * `sequence_number`, `event:` line equal to the data's `type`, byte for byte for a short answer); function
 * calls out and `function_call` / `function_call_output` items back in; `previous_response_id` (the earlier
 * turns but not their `instructions`) and `item_reference` resolved from stored responses, per account and
 * environment; `store: false` and a retention of 0 keep nothing; GET and DELETE; OpenAI's 400 envelope for
 * what the door refuses, charging nothing; every answer's `svc.credits_used` is what the ledger and
 * `/v1/usage` moved; a stream cut mid-answer ends with `response.failed`, charged for what was delivered.
 *
 * The cases run one at a time (vitest's default), which the recording's marks rely on.
 */
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, streamText, tool as aiTool, type ModelMessage } from 'ai';
import Database from 'libsql';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DEFAULT_CONFIG, parseConfig } from '../../src/config/schema.js';
import { ManualClock } from '../../src/core/clock.js';
import { createApiKey } from '../../src/keys/key-service.js';
import { startTestGateway, type Seeded, type TestGateway } from '../helpers/gateway.js';
import { sseChunk } from '../helpers/openai-sse.js';
import { ANSWER_TEXT, REASONER_USAGE, REASONING_TEXT, reasonerHandler } from '../helpers/reasoner-upstream.js';
import { openAIChatHandler } from '../helpers/recording-upstream/openai-chat.js';
import { Recording, type Recorded } from '../helpers/recording-upstream/recording.js';
import { startFixtureServer, writeInPieces, type FixtureServer } from '../providers/helpers/fixture-server.js';

type Json = Record<string, unknown>;

interface Svc {
  requested_model: string;
  routed_model: string;
  credits_used: number;
  tokens_metered: { prompt: number; completion: number; total: number };
}

// ---------------------------------------------------------------------------------------------------------
// The prompts and what the recording upstream answers them (answer-plan.ts)

const TEXT_PROMPT = 'Say hello to Ada.';
const INSTRUCTIONS = 'You are terse.';
const TOOL_PROMPT = 'What is the weather in Paris?';
const WEATHER_PARAMETERS = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
const WEATHER_TOOL: OpenAI.Responses.FunctionTool = {
  type: 'function',
  name: 'get_weather',
  description: 'The current weather in a city.',
  parameters: WEATHER_PARAMETERS,
  strict: true,
};
const weatherIn = (city: string): string => `Sunny, 21 C in ${city}`;
/** The recording upstream quotes tool results back: the proof the result reached it. */
const TOOL_ANSWER = `get_weather says: ${weatherIn('Paris')}`;
const echo = (prompt: string): string => `You said: ${prompt}`;

/** The scripted upstream's answer, in the pieces it streams, and its usage. */
const SCRIPT_PIECES = ['Hel', 'lo ', 'there.'];
const SCRIPT_USAGE = { prompt_tokens: 11, completion_tokens: 3, total_tokens: 14, prompt_tokens_details: { cached_tokens: 4 } };

// ---------------------------------------------------------------------------------------------------------
// The upstreams, one gateway, two accounts

/** A tool call cut by the output bound: its arguments end mid-JSON, `finish_reason: length`. */
const CUT_CALL = { id: 'call_cut_1', name: 'get_weather', pieces: ['{"ci', 'ty": "Pa'] };

/**
 * Always the same answer: SCRIPT_PIECES, then `stop` and the usage; JSON or SSE as asked. Offered tools, it
 * answers CUT_CALL instead, ended by the output bound.
 */
function scriptHandler(_req: IncomingMessage, res: ServerResponse, raw: string): void {
  const body = JSON.parse(raw) as Json;
  const cut = Array.isArray(body.tools) && body.tools.length > 0;
  const finish = cut ? 'length' : 'stop';
  if (body.stream !== true) {
    const message = cut
      ? { role: 'assistant', content: null, tool_calls: [{ id: CUT_CALL.id, type: 'function', function: { name: CUT_CALL.name, arguments: CUT_CALL.pieces.join('') } }] }
      : { role: 'assistant', content: SCRIPT_PIECES.join('') };
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({ id: 'up-1', object: 'chat.completion', created: 0, model: 'm', choices: [{ index: 0, message, finish_reason: finish }], usage: SCRIPT_USAGE }),
    );
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  let sse = sseChunk({ role: 'assistant', content: cut ? null : '' });
  if (cut) {
    sse += sseChunk({ tool_calls: [{ index: 0, id: CUT_CALL.id, type: 'function', function: { name: CUT_CALL.name, arguments: '' } }] });
    for (const piece of CUT_CALL.pieces) sse += sseChunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] });
  } else {
    for (const piece of SCRIPT_PIECES) sse += sseChunk({ content: piece });
  }
  sse += sseChunk({}, finish);
  sse += sseChunk({}, null, SCRIPT_USAGE);
  sse += 'data: [DONE]\n\n';
  void writeInPieces(res, sse).then(() => res.end());
}

const BROKEN_PIECES = ['The ', 'answer ', 'is '];

/** Streams a few words of an answer (offered tools: part of a tool call), then the connection dies: no finish, no usage. */
function brokenHandler(req: IncomingMessage, res: ServerResponse, raw: string): void {
  const body = JSON.parse(raw) as Json;
  if (body.stream !== true) return void req.socket.destroy();
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  if (Array.isArray(body.tools) && body.tools.length > 0) {
    res.write(sseChunk({ role: 'assistant', content: null }));
    res.write(sseChunk({ tool_calls: [{ index: 0, id: CUT_CALL.id, type: 'function', function: { name: CUT_CALL.name, arguments: '' } }] }));
    for (const piece of CUT_CALL.pieces) res.write(sseChunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }));
  } else {
    res.write(sseChunk({ role: 'assistant', content: '' }));
    for (const piece of BROKEN_PIECES) res.write(sseChunk({ content: piece }));
  }
  setTimeout(() => req.socket.destroy(), 30);
}

const recording = new Recording();
let upstreams: FixtureServer;
let gw: TestGateway;
let a: Seeded;
let b: Seeded;

beforeAll(async () => {
  upstreams = await startFixtureServer({ openai: openAIChatHandler(recording), script: scriptHandler, broken: brokenHandler });
  gw = await startTestGateway({
    config: parseConfig({
      // The dying upstream fails on purpose, more than once: its breaker must not open and answer 503 instead.
      health: { failure_threshold: 100 },
      providers: {
        'openai-chat': { type: 'openai-compatible', base_url: upstreams.baseUrl('openai'), paid: false },
        script: { type: 'openai-compatible', base_url: upstreams.baseUrl('script'), paid: false },
        broken: { type: 'openai-compatible', base_url: upstreams.baseUrl('broken'), paid: false },
      },
      aliases: {
        'svc-fast': { targets: [{ provider: 'openai-chat', model: 'gpt-4o-mini' }] },
        'svc-code': { targets: [{ provider: 'script', model: 'gpt-4o-mini' }] },
        'svc-smart': { targets: [{ provider: 'broken', model: 'gpt-4o-mini' }] },
      },
    }),
  });
  a = await gw.seed({ purchased: 10_000_000 });
  b = await gw.seed({ purchased: 10_000_000 });
});

afterAll(async () => {
  await gw?.close();
  await upstreams?.close();
});

// ---------------------------------------------------------------------------------------------------------
// Helpers: raw HTTP, the books, the SSE frames

function clientOf(account: Seeded = a): OpenAI {
  return new OpenAI({ baseURL: gw.url, apiKey: account.secret, maxRetries: 0 });
}

function post(body: unknown, account: Seeded = a): Promise<Response> {
  return fetch(`${gw.url}/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${account.secret}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

function byId(method: 'GET' | 'DELETE', id: string, secret: string = a.secret): Promise<Response> {
  return fetch(`${gw.url}/responses/${id}`, { method, headers: { authorization: `Bearer ${secret}` } });
}

async function usageTotal(account: Seeded = a): Promise<number> {
  const today = new Date().toISOString().slice(0, 10);
  // From yesterday: a run across midnight UTC records its first requests on the day before.
  const since = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
  const res = await fetch(`${gw.url}/usage?start_date=${since}&end_date=${today}`, { headers: { authorization: `Bearer ${account.secret}` } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { total_credits_spent: number }).total_credits_spent;
}

/** Waits for the account's holds to settle (a stream settles after its last byte); returns how many are left. */
async function pendingHolds(account: Seeded = a): Promise<number> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const n = await gw.store.ledger.countPendingHolds(account.accountId);
    if (n === 0 || Date.now() > deadline) return n;
    await new Promise((r) => setTimeout(r, 10));
  }
}

const svcOf = (value: unknown): Svc => (value as { svc: Svc }).svc;
/** `store` of a response object (the client's type does not declare it). */
const storeOf = (response: unknown): unknown => (response as { store?: unknown }).store;

interface Frame {
  event: string;
  data: Json;
  /** The frame's bytes as sent. */
  raw: string;
}

/** The frames of a Responses SSE body, each `event: <type>\ndata: <json>\n\n` with the data's `type` = the event. */
function responseFrames(body: string): Frame[] {
  expect(body.endsWith('\n\n'), 'the stream ends with a blank line').toBe(true);
  return body
    .slice(0, -2)
    .split('\n\n')
    .filter((block) => !block.startsWith(':'))
    .map((block) => {
      const m = /^event: ([a-z_.]+)\ndata: (\{.*\})$/.exec(block);
      if (m === null) throw new Error(`not a Responses SSE frame: ${JSON.stringify(block)}`);
      const data = JSON.parse(m[2] as string) as Json;
      expect(data.type, `the data's type of event ${m[1]}`).toBe(m[1]);
      return { event: m[1] as string, data, raw: `${block}\n\n` };
    });
}

/** The sequence numbers are 0, 1, 2... in the order sent. */
function expectSequenced(events: { sequence_number: number }[]): void {
  expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
}

/** One upstream request made since `mark` (and only one). */
function onlyUpstream(mark: number): Recorded {
  const sent = recording.since(mark, 'openai');
  expect(sent, 'upstream requests').toHaveLength(1);
  return sent[0] as Recorded;
}

/** The `messages` the upstream received, with only role, content and tool fields. */
const messagesOf = (rec: Recorded | undefined): Json[] => (rec?.body.messages as Json[] | undefined) ?? [];

// ---------------------------------------------------------------------------------------------------------

describe('openai client: responses.create', () => {
  it('string input and instructions: the response shape, its usage and svc; the upstream got system then user, bounded by max_output_tokens', async () => {
    const mark = recording.mark();
    const r = await clientOf().responses.create({ model: 'svc-fast', input: TEXT_PROMPT, instructions: INSTRUCTIONS, max_output_tokens: 64 });
    const sent = onlyUpstream(mark);

    expect(sent.body.messages).toEqual([
      { role: 'system', content: INSTRUCTIONS },
      { role: 'user', content: TEXT_PROMPT },
    ]);
    // gpt-4o-mini's provider takes the bound as max_tokens: the client's max_output_tokens, nothing else.
    expect(sent.body.max_tokens).toBe(64);
    expect(sent.body).not.toHaveProperty('max_completion_tokens');

    expect(r.object).toBe('response');
    expect(r.id).toMatch(/^resp_[A-Za-z0-9]+$/);
    expect(r.status).toBe('completed');
    expect(r.model).toBe('svc-fast');
    expect(r.error).toBeNull();
    expect(r.incomplete_details).toBeNull();
    expect(r.instructions).toBe(INSTRUCTIONS);
    expect(r.max_output_tokens).toBe(64);
    expect(r.previous_response_id).toBeNull();
    expect(storeOf(r)).toBe(true);
    // Unset sampling is reported as unset (each target samples with its own default), not as OpenAI's 1.
    expect(r.temperature).toBeNull();
    expect(r.top_p).toBeNull();
    expect(r.created_at).toBeCloseTo(Date.now() / 1000, -2);
    expect(r.output).toHaveLength(1);
    const [item] = r.output;
    expect(item).toEqual({
      type: 'message',
      id: `msg_${r.id.slice('resp_'.length)}_0`,
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: sent.reply.text, annotations: [], logprobs: [] }],
    });
    expect(r.output_text).toBe(echo(TEXT_PROMPT));
    expect(r.output_text).toBe(sent.reply.text);

    const expected = sent.reply.usage;
    expect(r.usage).toEqual({
      input_tokens: expected?.prompt_tokens,
      input_tokens_details: { cached_tokens: expected?.cached_tokens },
      output_tokens: expected?.completion_tokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: (expected?.prompt_tokens ?? NaN) + (expected?.completion_tokens ?? NaN),
    });
    const svc = svcOf(r);
    expect(svc).toMatchObject({ requested_model: 'svc-fast', routed_model: 'openai-chat/gpt-4o-mini' });
    expect(svc.credits_used).toBeGreaterThan(0);
    expect(svc.tokens_metered).toMatchObject({ prompt: expected?.prompt_tokens, completion: expected?.completion_tokens });

    // Kept: GET answers the same object, through the client too.
    const got = await byId('GET', r.id);
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toMatch(/^application\/json/);
    const { output_text: _, ...body } = r;
    expect(await got.json()).toEqual(body);
    const retrieved = await clientOf().responses.retrieve(r.id);
    expect(retrieved.output_text).toBe(r.output_text);
  });

  it('a message list input (EasyInputMessage and typed items, system and developer roles) reaches the upstream in order', async () => {
    const mark = recording.mark();
    const r = await clientOf().responses.create({
      model: 'svc-fast',
      input: [
        { role: 'developer', content: 'Be brief.' },
        { role: 'user', content: 'Hi, I am Ada.' },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hello Ada.', annotations: [] }] } as unknown as OpenAI.Responses.ResponseInputItem,
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Greet Bob.' }] },
      ],
    });
    const sent = onlyUpstream(mark);
    expect(messagesOf(sent)).toEqual([
      { role: 'developer', content: 'Be brief.' },
      { role: 'user', content: 'Hi, I am Ada.' },
      { role: 'assistant', content: 'Hello Ada.' },
      { role: 'user', content: [{ type: 'text', text: 'Greet Bob.' }] },
    ]);
    expect(r.output_text).toBe(echo('Greet Bob.'));
  });
});

describe('openai client: responses.stream', () => {
  it('the event sequence, sequence numbers from 0, deltas adding up to finalResponse, usage and svc on response.completed', async () => {
    const mark = recording.mark();
    const stream = clientOf().responses.stream({ model: 'svc-fast', input: TEXT_PROMPT, instructions: INSTRUCTIONS, max_output_tokens: 64 });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const final = await stream.finalResponse();
    const sent = onlyUpstream(mark);
    expect(sent.stream).toBe(true);
    expect(sent.body.messages).toEqual([
      { role: 'system', content: INSTRUCTIONS },
      { role: 'user', content: TEXT_PROMPT },
    ]);
    expect(sent.body.max_tokens).toBe(64);

    const types = events.map((e) => e.type);
    expect(types.join(' ')).toMatch(
      /^response\.created response\.in_progress response\.output_item\.added response\.content_part\.added( response\.output_text\.delta)+ response\.output_text\.done response\.content_part\.done response\.output_item\.done response\.completed$/,
    );
    expectSequenced(events);

    const deltas = events.flatMap((e) => (e.type === 'response.output_text.delta' ? [e.delta] : []));
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe(sent.reply.text);
    expect(final.output_text).toBe(sent.reply.text);
    const done = events.find((e) => e.type === 'response.output_text.done');
    expect(done?.type === 'response.output_text.done' && done.text).toBe(sent.reply.text);

    // One response id throughout, and the item ids name it.
    const created = events[0];
    if (created?.type !== 'response.created') throw new Error('no response.created');
    expect(created.response).toMatchObject({ object: 'response', status: 'in_progress', output: [], usage: null, model: 'svc-fast', store: true });
    expect(final.id).toBe(created.response.id);
    const added = events.find((e) => e.type === 'response.output_item.added');
    expect(added?.type === 'response.output_item.added' && added.item.id).toBe(`msg_${final.id.slice('resp_'.length)}_0`);

    const completed = events.at(-1);
    if (completed?.type !== 'response.completed') throw new Error('no response.completed');
    expect(completed.response.status).toBe('completed');
    expect(completed.response.model).toBe('svc-fast');
    expect(completed.response.usage).toMatchObject({
      input_tokens: sent.reply.usage?.prompt_tokens,
      output_tokens: sent.reply.usage?.completion_tokens,
      total_tokens: (sent.reply.usage?.prompt_tokens ?? NaN) + (sent.reply.usage?.completion_tokens ?? NaN),
      input_tokens_details: { cached_tokens: sent.reply.usage?.cached_tokens },
      output_tokens_details: { reasoning_tokens: 0 },
    });
    expect(svcOf(completed.response).credits_used).toBeGreaterThan(0);
    expect(svcOf(final).credits_used).toBe(svcOf(completed.response).credits_used);
    // Only the closing event carries svc.
    expect(events.filter((e) => 'response' in e && svcOf(e.response) !== undefined).map((e) => e.type)).toEqual(['response.completed']);

    // Kept as completed: GET answers the completed response.
    const got = (await (await byId('GET', final.id)).json()) as Json;
    expect(got).toMatchObject({ id: final.id, status: 'completed', output: completed.response.output, usage: completed.response.usage });
  });
});

// ---------------------------------------------------------------------------------------------------------

describe('function tools', () => {
  it('a tool call answer is a function_call item; the call and its output sent back reach the upstream as tool_calls and a tool message', async () => {
    const client = clientOf();
    const mark = recording.mark();
    const first = await client.responses.create({ model: 'svc-fast', input: TOOL_PROMPT, tools: [WEATHER_TOOL] });
    const sent = onlyUpstream(mark);
    expect(sent.body.tools).toEqual([
      { type: 'function', function: { name: 'get_weather', description: WEATHER_TOOL.description, parameters: WEATHER_PARAMETERS, strict: true } },
    ]);
    const call = sent.reply.toolCall;
    if (call === undefined) throw new Error('the upstream did not answer a tool call');
    expect(first.status).toBe('completed');
    expect(first.output).toEqual([
      {
        type: 'function_call',
        id: `fc_${first.id.slice('resp_'.length)}_0`,
        call_id: call.id,
        name: 'get_weather',
        arguments: JSON.stringify(call.args),
        status: 'completed',
      },
    ]);
    expect(first.output_text).toBe('');
    expect(first.tools).toEqual([{ type: 'function', name: 'get_weather', description: WEATHER_TOOL.description, parameters: WEATHER_PARAMETERS, strict: true }]);
    const fc = first.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
    const args = JSON.parse(fc.arguments) as { city: string };
    expect(args).toEqual({ city: 'Paris' });

    // The next turn: the whole conversation, the call as received and its output.
    const mark2 = recording.mark();
    const second = await client.responses.create({
      model: 'svc-fast',
      tools: [WEATHER_TOOL],
      input: [{ role: 'user', content: TOOL_PROMPT }, fc, { type: 'function_call_output', call_id: fc.call_id, output: weatherIn(args.city) }],
    });
    const sent2 = onlyUpstream(mark2);
    expect(messagesOf(sent2)).toEqual([
      { role: 'user', content: TOOL_PROMPT },
      { role: 'assistant', content: null, tool_calls: [{ id: call.id, type: 'function', function: { name: 'get_weather', arguments: fc.arguments } }] },
      { role: 'tool', tool_call_id: call.id, content: weatherIn('Paris') },
    ]);
    expect(second.output_text).toBe(TOOL_ANSWER);
  });

  it('streamed: output_item.added, function_call_arguments deltas and done, output_item.done; the arguments add up', async () => {
    const mark = recording.mark();
    const stream = clientOf().responses.stream({ model: 'svc-fast', input: TOOL_PROMPT, tools: [WEATHER_TOOL] });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const final = await stream.finalResponse();
    const call = onlyUpstream(mark).reply.toolCall;
    if (call === undefined) throw new Error('the upstream did not answer a tool call');

    expect(events.map((e) => e.type).join(' ')).toMatch(
      /^response\.created response\.in_progress response\.output_item\.added( response\.function_call_arguments\.delta)+ response\.function_call_arguments\.done response\.output_item\.done response\.completed$/,
    );
    expectSequenced(events);
    const added = events[2];
    if (added?.type !== 'response.output_item.added') throw new Error('no output_item.added');
    expect(added.item).toMatchObject({ type: 'function_call', call_id: call.id, name: 'get_weather', status: 'in_progress' });
    const deltas = events.flatMap((e) => (e.type === 'response.function_call_arguments.delta' ? [e.delta] : []));
    expect(JSON.parse(deltas.join(''))).toEqual(call.args);
    const argsDone = events.find((e) => e.type === 'response.function_call_arguments.done');
    expect(argsDone?.type === 'response.function_call_arguments.done' && argsDone.arguments).toBe(deltas.join(''));
    // (The client adds its own `parsed_arguments` to the final output.)
    expect(final.output).toMatchObject([
      { type: 'function_call', id: `fc_${final.id.slice('resp_'.length)}_0`, call_id: call.id, name: 'get_weather', arguments: deltas.join(''), status: 'completed' },
    ]);
    expect(svcOf(final).credits_used).toBeGreaterThan(0);
  });

  it('previous_response_id after a tool call: only the function_call_output is sent, the stored call is continued', async () => {
    const client = clientOf();
    const first = await client.responses.create({ model: 'svc-fast', input: TOOL_PROMPT, tools: [WEATHER_TOOL] });
    const fc = first.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
    const mark = recording.mark();
    const second = await client.responses.create({
      model: 'svc-fast',
      tools: [WEATHER_TOOL],
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: fc.call_id, output: weatherIn('Paris') }],
    });
    expect(messagesOf(onlyUpstream(mark))).toEqual([
      { role: 'user', content: TOOL_PROMPT },
      { role: 'assistant', content: null, tool_calls: [{ id: fc.call_id, type: 'function', function: { name: 'get_weather', arguments: fc.arguments } }] },
      { role: 'tool', tool_call_id: fc.call_id, content: weatherIn('Paris') },
    ]);
    expect(second.output_text).toBe(TOOL_ANSWER);
    expect(second.previous_response_id).toBe(first.id);
  });

  it('an item_reference to a stored function_call stands for the call', async () => {
    const first = await clientOf().responses.create({ model: 'svc-fast', input: TOOL_PROMPT, tools: [WEATHER_TOOL] });
    const fc = first.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
    const mark = recording.mark();
    const res = await post({
      model: 'svc-fast',
      tools: [WEATHER_TOOL],
      input: [
        { role: 'user', content: TOOL_PROMPT },
        { type: 'item_reference', id: fc.id },
        { type: 'function_call_output', call_id: fc.call_id, output: weatherIn('Paris') },
      ],
    });
    expect(res.status).toBe(200);
    expect(messagesOf(onlyUpstream(mark))).toEqual([
      { role: 'user', content: TOOL_PROMPT },
      { role: 'assistant', content: null, tool_calls: [{ id: fc.call_id, type: 'function', function: { name: 'get_weather', arguments: fc.arguments } }] },
      { role: 'tool', tool_call_id: fc.call_id, content: weatherIn('Paris') },
    ]);
  });
});

// ---------------------------------------------------------------------------------------------------------

describe('Vercel AI SDK: createOpenAI(...)(alias), a Responses model', () => {
  interface Exchange {
    url: string;
    request: Json;
    status: number;
  }
  function sdk(): { model: ReturnType<ReturnType<typeof createOpenAI>>; exchanges: Exchange[] } {
    const exchanges: Exchange[] = [];
    const tap: typeof globalThis.fetch = async (input, init) => {
      const response = await fetch(input, init);
      const url = input instanceof Request ? input.url : String(input);
      exchanges.push({ url, request: JSON.parse(typeof init?.body === 'string' ? init.body : '{}') as Json, status: response.status });
      return response;
    };
    return { model: createOpenAI({ baseURL: gw.url, apiKey: a.secret, fetch: tap })('svc-fast'), exchanges };
  }

  it('generateText: posts to /v1/responses; the text and usage are the upstream’s', async () => {
    const { model, exchanges } = sdk();
    const mark = recording.mark();
    const r = await generateText({ model, system: INSTRUCTIONS, prompt: TEXT_PROMPT, maxRetries: 0 });
    const sent = onlyUpstream(mark);
    expect(exchanges.map((e) => [new URL(e.url).pathname, e.status])).toEqual([['/v1/responses', 200]]);
    expect(r.text).toBe(sent.reply.text);
    expect(r.finishReason).toBe('stop');
    expect(r.usage.inputTokens).toBe(sent.reply.usage?.prompt_tokens);
    expect(r.usage.outputTokens).toBe(sent.reply.usage?.completion_tokens);
    expect(r.usage.inputTokenDetails.cacheReadTokens).toBe(sent.reply.usage?.cached_tokens);
    expect(r.response.id).toMatch(/^resp_/);
    expect(r.response.modelId).toBe('svc-fast');
    expect(messagesOf(sent)).toEqual([
      { role: 'system', content: INSTRUCTIONS },
      { role: 'user', content: [{ type: 'text', text: TEXT_PROMPT }] },
    ]);
  });

  it('streamText: the streamed text and usage are the upstream’s', async () => {
    const { model, exchanges } = sdk();
    const mark = recording.mark();
    const r = streamText({ model, prompt: TEXT_PROMPT, maxRetries: 0 });
    for await (const part of r.fullStream) if (part.type === 'error') throw part.error;
    const sent = onlyUpstream(mark);
    expect(sent.stream).toBe(true);
    expect(exchanges.map((e) => e.request.stream)).toEqual([true]);
    expect(await r.text).toBe(sent.reply.text);
    expect(await r.finishReason).toBe('stop');
    const usage = await r.usage;
    expect(usage.inputTokens).toBe(sent.reply.usage?.prompt_tokens);
    expect(usage.outputTokens).toBe(sent.reply.usage?.completion_tokens);
    expect((await r.response).id).toMatch(/^resp_/);
  });

  it('a second turn passing response.messages back: the earlier answer goes as an item_reference and reaches the upstream as the assistant turn', async () => {
    const { model, exchanges } = sdk();
    const messages: ModelMessage[] = [{ role: 'user', content: TEXT_PROMPT }];
    const first = await generateText({ model, messages, maxRetries: 0 });
    messages.push(...first.response.messages, { role: 'user', content: 'Now greet Bob.' });
    const mark = recording.mark();
    const second = await generateText({ model, messages, maxRetries: 0 });
    const sent = onlyUpstream(mark);

    // What the SDK sent: the store default, so a reference to the stored message item rather than its text.
    const input = exchanges[1]?.request.input as Json[];
    const ref = input.find((i) => i.type === 'item_reference');
    expect(ref).toEqual({ type: 'item_reference', id: expect.stringMatching(/^msg_/) });
    expect(exchanges.map((e) => e.status)).toEqual([200, 200]);

    expect(messagesOf(sent)).toEqual([
      { role: 'user', content: [{ type: 'text', text: TEXT_PROMPT }] },
      { role: 'assistant', content: first.text },
      { role: 'user', content: [{ type: 'text', text: 'Now greet Bob.' }] },
    ]);
    expect(first.text).toBe(echo(TEXT_PROMPT));
    expect(second.text).toBe(echo('Now greet Bob.'));
  });

  it('a second streamed turn after a streamed first: the reference is found as soon as the first stream ended', async () => {
    const { model } = sdk();
    const messages: ModelMessage[] = [{ role: 'user', content: TEXT_PROMPT }];
    const first = streamText({ model, messages, maxRetries: 0 });
    for await (const part of first.fullStream) if (part.type === 'error') throw part.error;
    messages.push(...(await first.response).messages, { role: 'user', content: 'Now greet Bob.' });
    const mark = recording.mark();
    const second = streamText({ model, messages, maxRetries: 0 });
    for await (const part of second.fullStream) if (part.type === 'error') throw part.error;
    expect(messagesOf(onlyUpstream(mark))[1]).toEqual({ role: 'assistant', content: await first.text });
    expect(await second.text).toBe(echo('Now greet Bob.'));
  });

  it('a tool loop (stopWhen: stepCountIs(3)) ends with the text the tool result led to', async () => {
    const { model, exchanges } = sdk();
    const mark = recording.mark();
    const r = await generateText({
      model,
      prompt: TOOL_PROMPT,
      maxRetries: 0,
      tools: {
        get_weather: aiTool({ description: WEATHER_TOOL.description ?? '', inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => weatherIn(city) }),
      },
      stopWhen: stepCountIs(3),
    });
    expect(r.steps).toHaveLength(2);
    expect(r.steps[0]?.toolCalls.map((c) => [c.toolName, c.input])).toEqual([['get_weather', { city: 'Paris' }]]);
    expect(r.text).toBe(TOOL_ANSWER);
    expect(r.finishReason).toBe('stop');
    expect(exchanges.map((e) => e.status)).toEqual([200, 200]);
    const [, second] = recording.since(mark, 'openai');
    const call = recording.since(mark, 'openai')[0]?.reply.toolCall;
    expect(messagesOf(second)).toEqual([
      { role: 'user', content: [{ type: 'text', text: TOOL_PROMPT }] },
      { role: 'assistant', content: null, tool_calls: [{ id: call?.id, type: 'function', function: { name: 'get_weather', arguments: JSON.stringify(call?.args) } }] },
      { role: 'tool', tool_call_id: call?.id, content: weatherIn('Paris') },
    ]);
  });

  it('a streamed tool loop ends with the same text', async () => {
    const { model } = sdk();
    const r = streamText({
      model,
      prompt: TOOL_PROMPT,
      maxRetries: 0,
      tools: {
        get_weather: aiTool({ description: WEATHER_TOOL.description ?? '', inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => weatherIn(city) }),
      },
      stopWhen: stepCountIs(3),
    });
    for await (const part of r.fullStream) if (part.type === 'error') throw part.error;
    expect(await r.text).toBe(TOOL_ANSWER);
    expect((await r.steps).map((s) => s.finishReason)).toEqual(['tool-calls', 'stop']);
  });
});

// ---------------------------------------------------------------------------------------------------------

describe('previous_response_id and store', () => {
  it('continues the earlier turns (user and assistant), without their instructions; a chain carries every turn', async () => {
    const client = clientOf();
    const first = await client.responses.create({ model: 'svc-fast', input: TEXT_PROMPT, instructions: INSTRUCTIONS });
    const mark = recording.mark();
    const second = await client.responses.create({ model: 'svc-fast', input: 'Now greet Bob.', previous_response_id: first.id, instructions: 'Answer in French.' });
    expect(messagesOf(onlyUpstream(mark))).toEqual([
      { role: 'system', content: 'Answer in French.' },
      { role: 'user', content: TEXT_PROMPT },
      { role: 'assistant', content: first.output_text },
      { role: 'user', content: 'Now greet Bob.' },
    ]);
    expect(second.previous_response_id).toBe(first.id);
    expect(second.instructions).toBe('Answer in French.');

    const mark3 = recording.mark();
    await client.responses.create({ model: 'svc-fast', input: 'And Carol?', previous_response_id: second.id });
    expect(messagesOf(onlyUpstream(mark3))).toEqual([
      { role: 'user', content: TEXT_PROMPT },
      { role: 'assistant', content: first.output_text },
      { role: 'user', content: 'Now greet Bob.' },
      { role: 'assistant', content: second.output_text },
      { role: 'user', content: 'And Carol?' },
    ]);
  });

  it('continues a streamed response at once: it is kept before response.completed is sent', async () => {
    const client = clientOf();
    const first = await client.responses.stream({ model: 'svc-fast', input: TEXT_PROMPT }).finalResponse();
    const mark = recording.mark();
    const second = await client.responses.create({ model: 'svc-fast', input: 'Now greet Bob.', previous_response_id: first.id });
    expect(messagesOf(onlyUpstream(mark))).toEqual([
      { role: 'user', content: TEXT_PROMPT },
      { role: 'assistant', content: first.output_text },
      { role: 'user', content: 'Now greet Bob.' },
    ]);
    expect(second.status).toBe('completed');
  });

  it('store: false is answered store false and kept nowhere: previous_response_id to it is a 400, GET a 404, its items unknown', async () => {
    const r = await clientOf().responses.create({ model: 'svc-fast', input: TEXT_PROMPT, store: false });
    expect(storeOf(r)).toBe(false);
    expect(r.status).toBe('completed');

    const res = await post({ model: 'svc-fast', input: 'Again.', previous_response_id: r.id });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error: { type: 'invalid_request_error', code: 'previous_response_not_found', param: 'previous_response_id', message: expect.stringContaining(r.id) },
    });
    // The client raises it as a BadRequestError carrying the same fields.
    const err = await clientOf()
      .responses.create({ model: 'svc-fast', input: 'Again.', previous_response_id: r.id })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err).toMatchObject({ status: 400, code: 'previous_response_not_found', param: 'previous_response_id' });

    const got = await byId('GET', r.id);
    expect(got.status).toBe(404);
    expect(await got.json()).toMatchObject({ error: { code: 'not_found', message: expect.stringContaining(r.id) } });

    const ref = await post({ model: 'svc-fast', input: [{ type: 'item_reference', id: r.output[0]?.id }, { role: 'user', content: 'Again.' }] });
    expect(ref.status).toBe(400);
    expect(await ref.json()).toMatchObject({ error: { type: 'invalid_request_error', code: 'item_not_found', param: 'input[0].id' } });
  });

  it('store: false streamed: store false on every response event, and not kept', async () => {
    const stream = clientOf().responses.stream({ model: 'svc-fast', input: TEXT_PROMPT, store: false });
    const stores: unknown[] = [];
    for await (const e of stream) if ('response' in e) stores.push(storeOf(e.response));
    const final = await stream.finalResponse();
    expect(stores).toEqual([false, false, false]);
    expect((await byId('GET', final.id)).status).toBe(404);
  });

  it('with server.responses_retention_days 0 nothing is kept: store is answered false, GET is 404, previous_response_id 400', async () => {
    const keepless = await startTestGateway({
      config: parseConfig({
        server: { responses_retention_days: 0 },
        providers: { 'openai-chat': { type: 'openai-compatible', base_url: upstreams.baseUrl('openai'), paid: false } },
        aliases: Object.fromEntries(['svc-fast', 'svc-code', 'svc-smart'].map((alias) => [alias, { targets: [{ provider: 'openai-chat', model: 'gpt-4o-mini' }] }])),
      }),
    });
    try {
      const acct = await keepless.seed({ purchased: 1_000_000 });
      const client = new OpenAI({ baseURL: keepless.url, apiKey: acct.secret, maxRetries: 0 });
      const r = await client.responses.create({ model: 'svc-fast', input: TEXT_PROMPT });
      expect(storeOf(r)).toBe(false);
      const streamed = await client.responses.stream({ model: 'svc-fast', input: TEXT_PROMPT, store: true }).finalResponse();
      expect(storeOf(streamed)).toBe(false);
      for (const id of [r.id, streamed.id]) {
        const got = await fetch(`${keepless.url}/responses/${id}`, { headers: { authorization: `Bearer ${acct.secret}` } });
        expect(got.status).toBe(404);
      }
      const err = await client.responses.create({ model: 'svc-fast', input: 'Again.', previous_response_id: r.id }).catch((e: unknown) => e);
      expect(err).toMatchObject({ status: 400, code: 'previous_response_not_found', param: 'previous_response_id' });
    } finally {
      await keepless.close();
    }
  });
});

// ---------------------------------------------------------------------------------------------------------

describe('scoping: a stored response is its account’s and environment’s', () => {
  it('another account’s key finds nothing (GET 404, previous_response_id 400, item_reference 400) and cannot delete it', async () => {
    const r = await clientOf(a).responses.create({ model: 'svc-fast', input: TEXT_PROMPT });
    const itemId = r.output[0]?.id;
    expect(itemId).toMatch(/^msg_/);

    const got = await byId('GET', r.id, b.secret);
    expect(got.status).toBe(404);
    expect(await got.json()).toMatchObject({ error: { code: 'not_found' } });

    const mark = recording.mark();
    const prev = await post({ model: 'svc-fast', input: 'Again.', previous_response_id: r.id }, b);
    expect(prev.status).toBe(400);
    expect(await prev.json()).toMatchObject({ error: { type: 'invalid_request_error', code: 'previous_response_not_found', param: 'previous_response_id' } });
    const ref = await post({ model: 'svc-fast', input: [{ role: 'user', content: TEXT_PROMPT }, { type: 'item_reference', id: itemId }, { role: 'user', content: 'Again.' }] }, b);
    expect(ref.status).toBe(400);
    expect(await ref.json()).toMatchObject({ error: { type: 'invalid_request_error', code: 'item_not_found', param: 'input[1].id' } });
    expect(recording.since(mark)).toHaveLength(0);

    const del = await byId('DELETE', r.id, b.secret);
    expect(del.status).toBe(404);
    // Still A's, whole.
    expect((await byId('GET', r.id, a.secret)).status).toBe(200);
    const own = await post({ model: 'svc-fast', input: [{ role: 'user', content: TEXT_PROMPT }, { type: 'item_reference', id: itemId }, { role: 'user', content: 'Again.' }] }, a);
    expect(own.status).toBe(200);
  });

  it('a key of the same account in the test environment finds nothing either', async () => {
    const r = await clientOf(a).responses.create({ model: 'svc-fast', input: TEXT_PROMPT });
    const { secret } = await createApiKey(gw.store.keys, { accountId: a.accountId, environment: 'test', name: 'test-env', dailyCreditLimit: null });
    expect((await byId('GET', r.id, secret)).status).toBe(404);
    expect((await byId('DELETE', r.id, secret)).status).toBe(404);
    expect((await byId('GET', r.id, a.secret)).status).toBe(200);
  });

  it('DELETE answers the deletion object; then GET, a second DELETE and previous_response_id find nothing', async () => {
    const r = await clientOf(a).responses.create({ model: 'svc-fast', input: TEXT_PROMPT });
    const del = await byId('DELETE', r.id);
    expect(del.status).toBe(200);
    expect(await del.json()).toEqual({ id: r.id, object: 'response', deleted: true });
    expect((await byId('GET', r.id)).status).toBe(404);
    expect((await byId('DELETE', r.id)).status).toBe(404);
    const prev = await post({ model: 'svc-fast', input: 'Again.', previous_response_id: r.id });
    expect(prev.status).toBe(400);
    expect(await prev.json()).toMatchObject({ error: { code: 'previous_response_not_found', param: 'previous_response_id' } });
    // The client's delete goes through the same route.
    const r2 = await clientOf(a).responses.create({ model: 'svc-fast', input: TEXT_PROMPT });
    await clientOf(a).responses.delete(r2.id);
    expect((await byId('GET', r2.id)).status).toBe(404);
  });

  it('an unknown id, and an id of another shape, are 404 in the envelope', async () => {
    for (const id of ['resp_doesnotexist', 'msg_abc_0', 'chatcmpl-123']) {
      const res = await byId('GET', id);
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ error: { type: expect.any(String), code: 'not_found', message: expect.stringContaining(id) } });
    }
  });
});

// ---------------------------------------------------------------------------------------------------------

describe('refusals: 400 in OpenAI’s envelope, naming the parameter, charging nothing, reaching no upstream', () => {
  const cases: [string, Json, string, string][] = [
    ['an unknown top-level field', { model: 'svc-fast', input: 'Hi', frobnicate: true }, 'frobnicate', 'unrecognized_argument'],
    ['a built-in tool', { model: 'svc-fast', input: 'Hi', tools: [{ type: 'web_search' }] }, 'tools[0].type', 'unsupported_parameter'],
    ['background: true', { model: 'svc-fast', input: 'Hi', background: true }, 'background', 'unsupported_parameter'],
    [
      'input_image with only a file_id',
      { model: 'svc-fast', input: [{ role: 'user', content: [{ type: 'input_text', text: 'What is this?' }, { type: 'input_image', file_id: 'file-abc123' }] }] },
      'input[0].content[1].file_id',
      'unsupported_parameter',
    ],
    ['an unknown previous_response_id', { model: 'svc-fast', input: 'Hi', previous_response_id: 'resp_nosuchresponse' }, 'previous_response_id', 'previous_response_not_found'],
    ['an unknown item_reference', { model: 'svc-fast', input: [{ type: 'item_reference', id: 'msg_nosuchresponse_0' }, { role: 'user', content: 'Hi' }] }, 'input[0].id', 'item_not_found'],
    ['a function tool without a name', { model: 'svc-fast', input: 'Hi', tools: [{ type: 'function', parameters: {} }] }, 'tools[0].name', 'missing_required_parameter'],
  ];

  it.each(cases)('%s', async (_name, body, param, code) => {
    const balance = await gw.store.ledger.balance(a.accountId, 'live');
    const spent = await usageTotal();
    const mark = recording.mark();
    const res = await post(body);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const error = ((await res.json()) as { error: Json }).error;
    expect(error).toMatchObject({ type: 'invalid_request_error', param, code, message: expect.stringMatching(/\S/) });
    expect(recording.since(mark)).toHaveLength(0);
    expect(await gw.store.ledger.balance(a.accountId, 'live')).toEqual(balance);
    expect(await usageTotal()).toBe(spent);
  });

  it('the openai client raises them as BadRequestError with the param', async () => {
    const err = await clientOf()
      .responses.create({ model: 'svc-fast', input: 'Hi', background: true })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err).toMatchObject({ status: 400, param: 'background', type: 'invalid_request_error' });
  });
});

// ---------------------------------------------------------------------------------------------------------

describe('metering', () => {
  it('each answer’s svc.credits_used (created, streamed, tool call, continued) sums to what /v1/usage and the balance moved', async () => {
    const client = clientOf();
    const spentBefore = await usageTotal();
    const balanceBefore = await gw.store.ledger.balance(a.accountId, 'live');
    const charged: number[] = [];

    const plain = await client.responses.create({ model: 'svc-fast', input: TEXT_PROMPT, max_output_tokens: 40 });
    charged.push(svcOf(plain).credits_used);
    const streamed = await client.responses.stream({ model: 'svc-fast', input: TEXT_PROMPT }).finalResponse();
    charged.push(svcOf(streamed).credits_used);
    const call = await client.responses.create({ model: 'svc-fast', input: TOOL_PROMPT, tools: [WEATHER_TOOL] });
    charged.push(svcOf(call).credits_used);
    const fc = call.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
    const answered = await client.responses
      .stream({ model: 'svc-fast', tools: [WEATHER_TOOL], previous_response_id: call.id, input: [{ type: 'function_call_output', call_id: fc.call_id, output: weatherIn('Paris') }] })
      .finalResponse();
    charged.push(svcOf(answered).credits_used);
    // The scripted target, non-streamed.
    charged.push(svcOf(await client.responses.create({ model: 'svc-code', input: 'Hi' })).credits_used);

    expect(charged.every((c) => Number.isInteger(c) && c > 0), JSON.stringify(charged)).toBe(true);
    const total = charged.reduce((x, y) => x + y, 0);
    expect(await pendingHolds()).toBe(0);
    expect(await usageTotal()).toBe(spentBefore + total);
    const balanceAfter = await gw.store.ledger.balance(a.accountId, 'live');
    expect(balanceBefore.purchased - balanceAfter.purchased).toBe(total);
    expect(balanceAfter.reserved).toBe(0);
  });
  it('an Idempotency-Key replays the same response (streamed and not), charged once', async () => {
    const send = (body: Json, key: string): Promise<Response> =>
      fetch(`${gw.url}/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${a.secret}`, 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify(body),
      });
    const spentBefore = await usageTotal();
    const mark = recording.mark();
    const key = `resp-${Date.now()}`;
    const first = await send({ model: 'svc-fast', input: TEXT_PROMPT }, key);
    const firstBody = await first.text();
    const again = await send({ model: 'svc-fast', input: TEXT_PROMPT }, key);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await again.text()).toBe(firstBody);
    const streamKey = `${key}-stream`;
    const streamed = await (await send({ model: 'svc-fast', input: TEXT_PROMPT, stream: true }, streamKey)).text();
    const replayed = await send({ model: 'svc-fast', input: TEXT_PROMPT, stream: true }, streamKey);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(await replayed.text()).toBe(streamed);
    expect(recording.since(mark)).toHaveLength(2);

    const once = svcOf(JSON.parse(firstBody)).credits_used + svcOf(responseFrames(streamed).at(-1)?.data.response).credits_used;
    expect(await pendingHolds()).toBe(0);
    expect(await usageTotal()).toBe(spentBefore + once);
    // The same key on another body is a conflict, not an answer.
    expect((await send({ model: 'svc-fast', input: 'Something else.' }, key)).status).toBe(409);
  });
});

// ---------------------------------------------------------------------------------------------------------

describe('the stream at the byte level', () => {
  it('a short scripted answer: exactly these frames, `event:` equal to the data’s type, sequence numbers 0.., no [DONE]', async () => {
    const res = await post({ model: 'svc-code', input: 'Say hello.', stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const raw = await res.text();
    expect(raw).not.toContain('[DONE]');
    const frames = responseFrames(raw);
    // Each frame is exactly `event: <type>\ndata: <one line of JSON>\n\n`.
    expect(frames.map((f) => f.raw).join('')).toBe(raw);
    for (const f of frames) expect(f.raw).toBe(`event: ${f.event}\ndata: ${JSON.stringify(f.data)}\n\n`);

    const created = frames[0]?.data.response as Json;
    const id = String(created.id);
    expect(id).toMatch(/^resp_[A-Za-z0-9]+$/);
    const msgId = `msg_${id.slice('resp_'.length)}_0`;
    const text = SCRIPT_PIECES.join('');
    const part = { type: 'output_text', text, annotations: [], logprobs: [] };
    const inProgress = { ...created };
    const completed = frames.at(-1)?.data.response as Json;
    const svc = svcOf(completed);

    expect(frames.map((f) => f.data)).toEqual([
      { type: 'response.created', sequence_number: 0, response: created },
      { type: 'response.in_progress', sequence_number: 1, response: inProgress },
      { type: 'response.output_item.added', sequence_number: 2, output_index: 0, item: { type: 'message', id: msgId, status: 'in_progress', role: 'assistant', content: [] } },
      {
        type: 'response.content_part.added',
        sequence_number: 3,
        item_id: msgId,
        output_index: 0,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [], logprobs: [] },
      },
      ...SCRIPT_PIECES.map((delta, i) => ({ type: 'response.output_text.delta', sequence_number: 4 + i, item_id: msgId, output_index: 0, content_index: 0, delta, logprobs: [] })),
      { type: 'response.output_text.done', sequence_number: 7, item_id: msgId, output_index: 0, content_index: 0, text, logprobs: [] },
      { type: 'response.content_part.done', sequence_number: 8, item_id: msgId, output_index: 0, content_index: 0, part },
      { type: 'response.output_item.done', sequence_number: 9, output_index: 0, item: { type: 'message', id: msgId, status: 'completed', role: 'assistant', content: [part] } },
      { type: 'response.completed', sequence_number: 10, response: { ...created, status: 'completed', output: [{ type: 'message', id: msgId, status: 'completed', role: 'assistant', content: [part] }], usage: completed.usage, svc } },
    ]);
    expect(created).toMatchObject({ object: 'response', status: 'in_progress', model: 'svc-code', output: [], usage: null, error: null, store: true, background: false });
    expect(created).not.toHaveProperty('svc');
    expect(created.created_at).toBeCloseTo(Date.now() / 1000, -2);
    expect(completed.usage).toEqual({
      input_tokens: 11,
      input_tokens_details: { cached_tokens: 4 },
      output_tokens: 3,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 14,
    });
    expect(svc).toMatchObject({ requested_model: 'svc-code', routed_model: 'script/gpt-4o-mini', tokens_metered: { prompt: 11, completion: 3 } });
    expect(svc.credits_used).toBeGreaterThan(0);
  });

  it('the same answer not streamed equals the completed response of the stream but for its id, time and svc', async () => {
    const res = await post({ model: 'svc-code', input: 'Say hello.' });
    const whole = (await res.json()) as Json;
    const streamed = responseFrames(await (await post({ model: 'svc-code', input: 'Say hello.', stream: true })).text()).at(-1)?.data.response as Json;
    const strip = (r: Json, id: string): Json => {
      const { id: _id, created_at: _t, svc: _s, ...rest } = r;
      return JSON.parse(JSON.stringify(rest).replaceAll(id.slice('resp_'.length), 'X')) as Json;
    };
    expect(strip(whole, String(whole.id))).toEqual(strip(streamed, String(streamed.id)));
  });
});

// ---------------------------------------------------------------------------------------------------------

describe('a tool call cut by the output bound (finish_reason length)', () => {
  const cutBody = { model: 'svc-code', input: TOOL_PROMPT, tools: [WEATHER_TOOL], max_output_tokens: 16 };

  it('not streamed: an incomplete response whose cut function_call is not reported completed', async () => {
    const res = await post(cutBody);
    expect(res.status).toBe(200);
    const r = (await res.json()) as Json & { output: Json[] };
    expect(r.status).toBe('incomplete');
    expect(r.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(r.output).toHaveLength(1);
    expect(r.output[0]).toMatchObject({ type: 'function_call', call_id: CUT_CALL.id, name: 'get_weather', arguments: CUT_CALL.pieces.join('') });
    // Its arguments are a JSON fragment: a client that runs `completed` calls must not run this one.
    expect(r.output[0]?.status).toBe('incomplete');
  });

  it('streamed: response.incomplete, and the cut function_call is not done as completed', async () => {
    const frames = responseFrames(await (await post({ ...cutBody, stream: true })).text());
    expectSequenced(frames.map((f) => f.data as { sequence_number: number }));
    expect(frames.at(-1)?.event).toBe('response.incomplete');
    const last = frames.at(-1)?.data.response as Json & { output: Json[] };
    expect(last.status).toBe('incomplete');
    expect(last.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    const itemDone = frames.find((f) => f.event === 'response.output_item.done')?.data.item as Json;
    expect(itemDone).toMatchObject({ type: 'function_call', arguments: CUT_CALL.pieces.join('') });
    expect(itemDone.status).toBe('incomplete');
    expect(last.output[0]?.status).toBe('incomplete');
  });
});

// ---------------------------------------------------------------------------------------------------------

describe('a stream whose upstream dies mid-answer, with no target to continue it', () => {
  it('ends with response.failed (error, the partial output, svc), no response.completed; charged for what was delivered', async () => {
    const spentBefore = await usageTotal();
    const balanceBefore = await gw.store.ledger.balance(a.accountId, 'live');
    const res = await post({ model: 'svc-smart', input: 'Tell me the answer.', stream: true });
    expect(res.status).toBe(200);
    const frames = responseFrames(await res.text());
    const types = frames.map((f) => f.event);
    expectSequenced(frames.map((f) => f.data as { sequence_number: number }));
    expect(types).not.toContain('response.completed');
    expect(types.at(-1)).toBe('response.failed');
    expect(types.filter((t) => t === 'response.failed')).toHaveLength(1);
    expect(types.slice(0, 4)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added']);
    const deltas = frames.filter((f) => f.event === 'response.output_text.delta').map((f) => String(f.data.delta));
    expect(deltas.join('')).toBe(BROKEN_PIECES.join(''));

    const failed = frames.at(-1)?.data.response as Json & { error: { code: string; message: string }; output: Json[] };
    expect(failed.status).toBe('failed');
    expect(failed.error).toEqual({ code: expect.any(String), message: expect.any(String) });
    expect(failed.error.message.length).toBeGreaterThan(0);
    expect(failed.output).toEqual([
      { type: 'message', id: expect.stringMatching(/^msg_/), status: 'incomplete', role: 'assistant', content: [{ type: 'output_text', text: BROKEN_PIECES.join(''), annotations: [], logprobs: [] }] },
    ]);
    const svc = svcOf(failed);
    expect(svc.credits_used).toBeGreaterThan(0);

    expect(await pendingHolds()).toBe(0);
    expect(await usageTotal()).toBe(spentBefore + svc.credits_used);
    expect(balanceBefore.purchased - (await gw.store.ledger.balance(a.accountId, 'live')).purchased).toBe(svc.credits_used);
  });

  it('the openai client sees response.failed and no completed response', async () => {
    const stream = clientOf().responses.stream({ model: 'svc-smart', input: 'Tell me the answer.' });
    const types: string[] = [];
    const outcome = await (async () => {
      for await (const e of stream) types.push(e.type);
      return stream.finalResponse();
    })().catch((e: unknown) => e);
    expect(types).toContain('response.failed');
    expect(types).not.toContain('response.completed');
    // finalResponse() gives a response only for response.completed; whatever it does here, it is not a completed one.
    if (!(outcome instanceof Error)) expect((outcome as OpenAI.Responses.Response).status).not.toBe('completed');
  });

  it('a function call cut by the failure is in response.failed, not reported completed', async () => {
    const frames = responseFrames(await (await post({ model: 'svc-smart', input: TOOL_PROMPT, tools: [WEATHER_TOOL], stream: true })).text());
    expect(frames.map((f) => f.event)).not.toContain('response.completed');
    expect(frames.at(-1)?.event).toBe('response.failed');
    const failed = frames.at(-1)?.data.response as Json & { output: Json[] };
    expect(failed.status).toBe('failed');
    expect(failed.output[0]).toMatchObject({ type: 'function_call', call_id: CUT_CALL.id, arguments: CUT_CALL.pieces.join('') });
    expect(failed.output[0]?.status).toBe('incomplete');
    expect(svcOf(failed).credits_used).toBeGreaterThan(0);
  });
});

describe('a stream whose upstream dies mid-answer, continued by the next target', () => {
  let cgw: TestGateway;
  let acct: Seeded;

  beforeAll(async () => {
    const targets = [
      { provider: 'broken', model: 'gpt-4o-mini' },
      { provider: 'openai-chat', model: 'gpt-4o-mini' },
    ];
    cgw = await startTestGateway({
      config: parseConfig({
        health: { failure_threshold: 100 },
        providers: {
          broken: { type: 'openai-compatible', base_url: upstreams.baseUrl('broken'), paid: false },
          'openai-chat': { type: 'openai-compatible', base_url: upstreams.baseUrl('openai'), paid: false },
        },
        aliases: { 'svc-fast': { targets }, 'svc-code': { targets }, 'svc-smart': { targets } },
      }),
    });
    acct = await cgw.seed({ purchased: 1_000_000 });
  });
  afterAll(() => cgw?.close());

  it('one response, one message item, the partial text then the continuation; completed, charged and kept whole', async () => {
    const mark = recording.mark();
    const res = await fetch(`${cgw.url}/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${acct.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'svc-fast', input: 'Tell me the answer.', stream: true }),
    });
    const frames = responseFrames(await res.text());
    expectSequenced(frames.map((f) => f.data as { sequence_number: number }));
    const continuation = onlyUpstream(mark);
    // The next target was asked to continue from the partial text.
    expect(messagesOf(continuation).slice(0, 2)).toEqual([
      { role: 'user', content: 'Tell me the answer.' },
      { role: 'assistant', content: BROKEN_PIECES.join('') },
    ]);
    const whole = BROKEN_PIECES.join('') + String(continuation.reply.text);
    expect(frames.map((f) => f.event).filter((t) => t === 'response.output_item.added')).toHaveLength(1);
    expect(frames.filter((f) => f.event === 'response.output_text.delta').map((f) => String(f.data.delta)).join('')).toBe(whole);
    expect(frames.at(-1)?.event).toBe('response.completed');
    const completed = frames.at(-1)?.data.response as Json & { id: string; output: Json[] };
    expect(completed.output).toEqual([
      { type: 'message', id: `msg_${completed.id.slice('resp_'.length)}_0`, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: whole, annotations: [], logprobs: [] }] },
    ]);
    expect(svcOf(completed).credits_used).toBeGreaterThan(0);
    const got = await fetch(`${cgw.url}/responses/${completed.id}`, { headers: { authorization: `Bearer ${acct.secret}` } });
    expect(((await got.json()) as { output: Json[] }).output).toEqual(completed.output);
  });
});

// ---------------------------------------------------------------------------------------------------------

describe('retention: a stored response is kept 30 days by default, then gone', () => {
  const T0 = Date.UTC(2026, 10, 25, 9);
  const DAY = 86_400_000;
  const clock = new ManualClock(T0);
  let cgw: TestGateway;
  let acct: Seeded;

  beforeAll(async () => {
    const config = structuredClone(DEFAULT_CONFIG) as { server?: object; providers: { sandbox: { pace: unknown } } };
    config.providers.sandbox.pace = { time_to_first_token_ms: 0, tokens_per_second: 0 };
    config.server = { reaper_interval_ms: 100 };
    cgw = await startTestGateway({ config: parseConfig(config), clock });
    acct = await cgw.seed({ purchased: 1_000_000 });
  });
  afterAll(() => cgw?.close());

  function storedRows(): number {
    const db = new Database(join(cgw.dir, 'gateway.db'), { readonly: true });
    try {
      return (db.prepare('SELECT count(*) AS n FROM stored_responses').get() as { n: number }).n;
    } finally {
      db.close();
    }
  }

  it('found until 30 days after it was made; then GET is 404, previous_response_id 400, and the reaper deletes it', async () => {
    const client = new OpenAI({ baseURL: cgw.url, apiKey: acct.secret, maxRetries: 0 });
    const r = await client.responses.create({ model: 'svc-fast', input: 'Hi', max_output_tokens: 16 });
    expect(storedRows()).toBe(1);
    const get = (): Promise<Response> => fetch(`${cgw.url}/responses/${r.id}`, { headers: { authorization: `Bearer ${acct.secret}` } });

    clock.set(T0 + 30 * DAY - 60_000);
    expect((await get()).status).toBe(200);
    const continued = await client.responses.create({ model: 'svc-fast', input: 'Again.', previous_response_id: r.id, max_output_tokens: 16, store: false });
    expect(continued.previous_response_id).toBe(r.id);

    clock.set(T0 + 30 * DAY + 60_000);
    expect((await get()).status).toBe(404);
    const err = await client.responses.create({ model: 'svc-fast', input: 'Again.', previous_response_id: r.id }).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 400, code: 'previous_response_not_found', param: 'previous_response_id' });
    // The reaper (every 100 ms here) deletes the expired row.
    const until = Date.now() + 3000;
    while (storedRows() > 0 && Date.now() < until) await new Promise((res) => setTimeout(res, 50));
    expect(storedRows()).toBe(0);
  });
});

// ---------------------------------------------------------------------------------------------------------

describe('a target that reasons (reasoning_content): a reasoning item before the message', () => {
  const bodies: Json[] = [];
  let rup: FixtureServer;
  let rgw: TestGateway;
  let racct: Seeded;

  beforeAll(async () => {
    rup = await startFixtureServer({ reasoner: reasonerHandler(bodies) });
    const target = { provider: 'reasoner', model: 'deepseek-reasoner' };
    rgw = await startTestGateway({
      config: parseConfig({
        providers: { reasoner: { type: 'openai-compatible', base_url: rup.baseUrl('reasoner'), paid: false } },
        aliases: { 'svc-fast': { targets: [target] }, 'svc-code': { targets: [target] }, 'svc-smart': { targets: [target] } },
      }),
    });
    racct = await rgw.seed({ purchased: 1_000_000 });
  });
  afterAll(async () => {
    await rgw?.close();
    await rup?.close();
  });

  const client = (): OpenAI => new OpenAI({ baseURL: rgw.url, apiKey: racct.secret, maxRetries: 0 });

  it('not streamed: output is the reasoning summary, then the message; reasoning tokens in usage', async () => {
    const r = await client().responses.create({ model: 'svc-smart', input: 'What is two and two?' });
    const rid = r.id.slice('resp_'.length);
    expect(r.output).toEqual([
      { type: 'reasoning', id: `rs_${rid}_0`, summary: [{ type: 'summary_text', text: REASONING_TEXT }] },
      { type: 'message', id: `msg_${rid}_1`, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: ANSWER_TEXT, annotations: [], logprobs: [] }] },
    ]);
    expect(r.output_text).toBe(ANSWER_TEXT);
    expect(r.usage?.output_tokens_details.reasoning_tokens).toBe(REASONER_USAGE.completion_tokens_details.reasoning_tokens);
  });

  it('streamed: the reasoning summary events close before the message opens', async () => {
    const stream = client().responses.stream({ model: 'svc-smart', input: 'What is two and two?' });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const e of stream) events.push(e);
    const final = await stream.finalResponse();
    expect(events.map((e) => e.type).join(' ')).toMatch(
      new RegExp(
        '^response\\.created response\\.in_progress ' +
          'response\\.output_item\\.added response\\.reasoning_summary_part\\.added( response\\.reasoning_summary_text\\.delta)+ ' +
          'response\\.reasoning_summary_text\\.done response\\.reasoning_summary_part\\.done response\\.output_item\\.done ' +
          'response\\.output_item\\.added response\\.content_part\\.added( response\\.output_text\\.delta)+ response\\.output_text\\.done ' +
          'response\\.content_part\\.done response\\.output_item\\.done response\\.completed$',
      ),
    );
    expectSequenced(events);
    const reasoning = events.flatMap((e) => (e.type === 'response.reasoning_summary_text.delta' ? [e.delta] : [])).join('');
    expect(reasoning).toBe(REASONING_TEXT);
    expect(final.output_text).toBe(ANSWER_TEXT);
    expect(final.output.map((i) => i.type)).toEqual(['reasoning', 'message']);
  });

  it('the AI SDK reads it as reasoningText; a second turn referencing both items sends the answer, not the reasoning', async () => {
    const model = createOpenAI({ baseURL: rgw.url, apiKey: racct.secret })('svc-smart');
    const messages: ModelMessage[] = [{ role: 'user', content: 'What is two and two?' }];
    const first = await generateText({ model, messages, maxRetries: 0 });
    expect(first.text).toBe(ANSWER_TEXT);
    expect(first.reasoningText).toBe(REASONING_TEXT);
    messages.push(...first.response.messages, { role: 'user', content: 'And three and three?' });
    const second = await generateText({ model, messages, maxRetries: 0 });
    expect(second.text).toBe(ANSWER_TEXT);
    expect(bodies.at(-1)?.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'What is two and two?' }] },
      { role: 'assistant', content: ANSWER_TEXT },
      { role: 'user', content: [{ type: 'text', text: 'And three and three?' }] },
    ]);
  });
});
