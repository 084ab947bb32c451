/**
 * Fuzz test (issue 15, "Prove") of the public doors that test/e2e/fuzz.test.ts does not cover: the legacy
 * completions door, the Anthropic Messages door (and its count_tokens), the Responses door (POST, and GET /
 * DELETE by id) and embeddings, against a real gateway (real HTTP server, real SQLite file, the instant
 * sandbox, an embedding alias served by the sandbox). Bodies are mutations of valid requests (helpers in
 * test/helpers/fuzz-json.ts), sent with hostile headers, framing and queries, in the style of fuzz.test.ts.
 *
 * Every answer: no 5xx and no hang; on a 4xx the door's error envelope (OpenAI's, documented in
 * docs/errors.md; Anthropic's `{type:"error", error:{type, message}}` on /v1/messages, its type matching the
 * status) and every balance and hold exactly as before; on a 200 the ledger moved by exactly the
 * `svc.credits_used` the answer reports (the last one of a stream), and by nothing for count_tokens, GET and
 * DELETE. GET / DELETE /v1/responses/{id} are also checked against a model of the stored responses: a stored,
 * undeleted response is found by its owner (account and environment) and by nobody else.
 * Seeds are fixed; fast-check prints the seed, the path and the shrunk counterexample on failure.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, parseConfig } from '../../src/config/schema.js';
import { createApiKey } from '../../src/keys/key-service.js';
import { ALIASES } from '../../src/routing/catalog.js';
import type { Environment } from '../../src/store/types.js';
import { contractBreach, documentedErrors, send, type FuzzAnswer, type FuzzRequest } from '../helpers/fuzz-http.js';
import { brokenBody, hostileKey, hostileStrings, mutatedBody } from '../helpers/fuzz-json.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { ledgerTotal, readLedger as readLedgerOf, settledLedger, type Ledger } from '../helpers/fuzz-ledger.js';
import { framingWith, headerText, type Framing } from '../helpers/fuzz-arbitraries.js';

const DAY_MS = 86_400_000;
const PARAMS = { seed: 0x15d00e } as const;
const EMBED_ALIAS = 'svc-embed';
const EMBED_PRICE = 130;
/** The error table of docs/errors.md: every error these doors answer must be one of its rows. */
const DOCUMENTED = new Set(documentedErrors(readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8')));

let gw: TestGateway;
let origin: string;
/** The keys a request can act as, by role. */
const secrets: Record<'rich' | 'poor' | 'capped' | 'test', string> = { rich: '', poor: '', capped: '', test: '' };
/** `bystander` owns nothing any request names: its balance must never move. */
const accounts = { rich: '', poor: '', bystander: '' };

beforeAll(async () => {
  const cfg = structuredClone(DEFAULT_CONFIG) as Record<string, unknown> & { providers: { sandbox: { pace: unknown } } };
  cfg.providers.sandbox.pace = { time_to_first_token_ms: 0, tokens_per_second: 0 };
  // An embedding alias served by the sandbox, as test/e2e/embeddings-door.test.ts configures one.
  cfg.embeddings = { [EMBED_ALIAS]: { credits_per_1k_tokens: EMBED_PRICE, targets: [{ provider: 'sandbox', model: 'sandbox-embed' }], description: 'fuzz' } };
  gw = await startTestGateway({ config: parseConfig(cfg) });
  origin = new URL(gw.url).origin;
  const rich = await gw.seed({ purchased: 1_000_000_000, earned: [{ amount: 5_000, expiresAt: Date.now() + 30 * DAY_MS }] });
  const poor = await gw.seed({ purchased: 40 });
  const bystander = await gw.seed({ purchased: 1_000 });
  accounts.rich = rich.accountId;
  accounts.poor = poor.accountId;
  accounts.bystander = bystander.accountId;
  secrets.rich = rich.secret;
  secrets.poor = poor.secret;
  secrets.capped = (await newKey(rich.accountId, 'live', 60)).secret;
  await gw.store.ledger.grant({ accountId: rich.accountId, environment: 'test', kind: 'purchased', amount: 1_000_000, expiresAt: null, idempotencyKey: null });
  secrets.test = (await newKey(rich.accountId, 'test', null)).secret;
  // Stored responses of each owner, so previous_response_id, item_reference, GET and DELETE name real ones.
  for (const r of ['rich', 'rich', 'rich', 'test', 'poor'] as const) {
    const res = await fetch(`${gw.url}/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secrets[r]}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'svc-fast', input: 'Say hello.', max_output_tokens: 4 }),
    });
    expect(res.status).toBe(200);
    remember(JSON.parse(await res.text()), ownerOf(r));
  }
});
afterAll(() => gw?.close());

/** How many answers of each kind (`POST /v1/messages 200 stream`): the fuzz must reach past validation. */
const outcomes = new Map<string, number>();

function newKey(accountId: string, environment: Environment, dailyCreditLimit: number | null): Promise<{ id: string; secret: string }> {
  return createApiKey(gw.store.keys, { accountId, environment, name: 'fuzz', dailyCreditLimit }).then((k) => ({ id: k.record.id, secret: k.secret }));
}

// ---- The stored responses, as the fuzz made them ----

type Role = keyof typeof secrets;
/** Stored responses belong to an account and an environment. */
const ownerOf = (r: Role): string => (r === 'poor' ? 'poor/live' : r === 'test' ? 'rich/test' : 'rich/live');

interface Stored {
  id: string;
  owner: string;
  /** Its output items' ids, for item_reference. */
  items: string[];
  deleted: boolean;
}
const stored: Stored[] = [];

function remember(response: { id?: unknown; store?: unknown; output?: unknown }, owner: string): void {
  if (typeof response.id !== 'string' || response.store !== true) return;
  const items = Array.isArray(response.output) ? response.output.map((o: { id?: unknown }) => o.id).filter((id): id is string => typeof id === 'string') : [];
  stored.push({ id: response.id, owner, items, deleted: false });
}

// ---- The ledger, before and after each request (test/helpers/fuzz-ledger.ts) ----

const readLedger = (): Promise<Ledger> => readLedgerOf(gw.store, accounts);
const settled = (): Promise<Ledger> => settledLedger(gw.store, accounts);
const total = ledgerTotal;

// ---- What an answer says ----

/** The JSON payloads of an SSE body (`data:` lines; `[DONE]` left out). */
function ssePayloads(text: string): unknown[] {
  const out: unknown[] = [];
  for (const block of text.split('\n\n')) {
    for (const line of block.split('\n')) {
      if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
      out.push(JSON.parse(line.slice(6)));
    }
  }
  return out;
}

type Json = Record<string, unknown>;
const isStream = (a: FuzzAnswer): boolean => a.contentType.startsWith('text/event-stream');
const payloadsOf = (a: FuzzAnswer): Json[] => (isStream(a) ? ssePayloads(a.text) : [JSON.parse(a.text)]) as Json[];

/** The last `svc.credits_used` of an answer: the body's, or a stream's last event's (a Responses event nests it in `response`). */
function creditsUsed(a: FuzzAnswer): number | undefined {
  let credits: number | undefined;
  for (const p of payloadsOf(a)) {
    const svc = (p.svc ?? (p.response as Json | undefined)?.svc) as { credits_used?: unknown } | undefined;
    if (typeof svc?.credits_used === 'number') credits = svc.credits_used;
  }
  return credits;
}

// ---- The contract of each door's refusals ----

/** Anthropic's error type for each status the gateway answers on its door (src/anthropic/error-envelope.ts, Anthropic's docs). */
const ANTHROPIC_TYPE: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  409: 'invalid_request_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
};

/** Why an answer of the Anthropic door breaks its contract, or null: no 5xx, every 4xx exactly Anthropic's envelope. */
function anthropicBreach(a: FuzzAnswer): string | null {
  if (a.status >= 500) return `status ${a.status}: ${a.text.slice(0, 300)}`;
  if (a.status < 400) return null;
  if (!a.contentType.startsWith('application/json')) return `${a.status} with content-type '${a.contentType}'`;
  let body: unknown;
  try {
    body = JSON.parse(a.text);
  } catch {
    return `${a.status} with a body that is not JSON: ${a.text.slice(0, 200)}`;
  }
  const b = body as { type?: unknown; error?: { type?: unknown; message?: unknown } } | null;
  if (typeof b !== 'object' || b === null || Array.isArray(b) || Object.keys(b).sort().join() !== 'error,type' || b.type !== 'error') {
    return `${a.status} without Anthropic's error envelope: ${a.text.slice(0, 200)}`;
  }
  const e = b.error;
  if (typeof e !== 'object' || e === null || Object.keys(e).sort().join() !== 'message,type') return `${a.status} Anthropic error with keys ${Object.keys(e ?? {}).join()}`;
  if (typeof e.message !== 'string' || e.message === '') return `${a.status} Anthropic error without a message`;
  if (e.type !== ANTHROPIC_TYPE[a.status]) return `${a.status} Anthropic error of type ${String(e.type)}, expected ${ANTHROPIC_TYPE[a.status] ?? '(no 4xx of this status)'}`;
  return null;
}

type Envelope = 'openai' | 'anthropic';
/** What a 2xx may do to the ledger: 'charge' moves it by exactly the answer's svc.credits_used, 'none' not at all. */
type Billing = 'charge' | 'none';

/** Sends one request and checks the contract (see the file's comment). */
async function exchange(req: FuzzRequest, envelope: Envelope, billing: Billing): Promise<FuzzAnswer> {
  const before = await readLedger();
  expect(before.pending).toBe(0);
  const answer = await send(origin, req);
  // `/v1/responses/{id}` counts as one endpoint whatever the id.
  const path = (req.path.split('?')[0] ?? '').split('/').slice(0, 4);
  if (path[2] === 'responses' && path.length > 3) path[3] = '{id}';
  const outcome = `${req.method} ${path.join('/')} ${answer.status}${isStream(answer) ? ' stream' : ''}`;
  outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
  const breach = envelope === 'anthropic' ? anthropicBreach(answer) : contractBreach(answer, DOCUMENTED);
  if (breach) throw new Error(`${req.method} ${req.path.slice(0, 200)}: ${breach}`);
  const after = await settled();
  expect(after.pending, 'a hold outlived its request').toBe(0);
  const what = `${req.method} ${req.path.slice(0, 120)} -> ${answer.status}`;
  if (answer.status >= 400 || billing === 'none') expect(after, `${what} moved credits`).toEqual(before);
  else {
    const credits = creditsUsed(answer);
    expect(credits, `${what} without svc.credits_used: ${answer.text.slice(-300)}`).toBeTypeOf('number');
    expect(total(before) - total(after), `${what}: the ledger moved by other than svc.credits_used`).toBe(credits);
    expect(after.balances['bystander/live'], `${what} charged a bystander`).toEqual(before.balances['bystander/live']);
  }
  for (const b of Object.values(after.balances)) expect(Math.min(b.earned, b.purchased, b.reserved)).toBeGreaterThanOrEqual(0);
  return answer;
}

// ---- Headers ----

const role = fc.constantFrom<Role>('rich', 'rich', 'rich', 'poor', 'capped', 'test');

/** `header`: where a key goes (`x-api-key` is the Anthropic clients' way, also taken on every door). */
type Auth = { kind: 'key'; role: Role; header: 'authorization' | 'x-api-key' | 'both'; scheme: string; cut: number; suffix: string } | { kind: 'none' } | { kind: 'raw'; value: string };
const authArb = (xApiKeyWeight: number): fc.Arbitrary<Auth> =>
  fc.oneof(
    { arbitrary: fc.record({ kind: fc.constant('key' as const), role, header: fc.constant('authorization' as const), scheme: fc.constant('Bearer'), cut: fc.constant(0), suffix: fc.constant('') }), weight: 24 },
    {
      arbitrary: fc.record({ kind: fc.constant('key' as const), role, header: fc.constantFrom('x-api-key' as const, 'both' as const), scheme: fc.constant('Bearer'), cut: fc.constant(0), suffix: fc.constant('') }),
      weight: xApiKeyWeight,
    },
    {
      arbitrary: fc.record({
        kind: fc.constant('key' as const),
        role,
        header: fc.constantFrom('authorization' as const, 'x-api-key' as const),
        scheme: fc.constantFrom('Bearer', 'bearer', 'BEARER', 'Basic', 'Token', '', 'Bearer '),
        cut: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 60 })),
        suffix: fc.oneof(fc.constant(''), headerText(8), fc.constantFrom(' ', 'x', ' extra', ',Bearer x')),
      }),
      weight: 3,
    },
    { arbitrary: fc.constant({ kind: 'none' as const }), weight: 1 },
    { arbitrary: fc.record({ kind: fc.constant('raw' as const), value: fc.oneof(headerText(300), fc.constantFrom('Bearer', 'Bearer sk-', 'Bearer svc_live_', 'Bearer sk-ant-api03-x')) }), weight: 1 },
  );

function authHeader(a: Auth): Record<string, string> {
  if (a.kind === 'none') return {};
  if (a.kind === 'raw') return { authorization: a.value };
  const secret = secrets[a.role];
  const key = `${secret.slice(0, secret.length - a.cut)}${a.suffix}`;
  if (a.header === 'x-api-key') return { 'x-api-key': a.scheme === 'Bearer' ? key : `${a.scheme} ${key}` };
  // Both: Bearer wins, so a wrong x-api-key beside a right Bearer must not matter.
  if (a.header === 'both') return { authorization: `${a.scheme} ${key}`, 'x-api-key': `${key.slice(0, -3)}xyz` };
  return { authorization: `${a.scheme} ${key}` };
}

/** The role an authenticated request acted as (null: it was refused as unauthenticated, or had no key). */
const actorOf = (a: Auth, answer: FuzzAnswer): Role | null => (a.kind === 'key' && answer.status !== 401 ? a.role : null);


const extraHeaders = fc.dictionary(
  fc.constantFrom('x-svc-quality-bias', 'idempotency-key', 'accept', 'accept-encoding', 'anthropic-version', 'anthropic-beta', 'openai-beta', 'x-request-id', 'x-fuzz'),
  fc.oneof(headerText(40), fc.constantFrom('0', '1', '0.5', '-1', 'NaN', '1e309', 'text/event-stream', 'gzip, br', '2023-06-01', 'prompt-caching-2024-07-31', 'responses=v1', '"'), headerText(300)),
  { maxKeys: 3 },
);

const framing = framingWith(extraHeaders);

const headersOf = (auth: Auth, f: Framing): Record<string, string> => ({
  ...f.extra,
  ...(f.contentType === undefined ? {} : { 'content-type': f.contentType }),
  ...authHeader(auth),
});

// ---- Paths and queries ----

const UNRESERVED = /[A-Za-z0-9\-._~]/;
/** Percent-encodes UTF-8 bytes (lone surrogates become U+FFFD instead of throwing like encodeURIComponent). */
function encodeSegment(s: string): string {
  let out = '';
  for (const byte of new TextEncoder().encode(s)) {
    const ch = String.fromCharCode(byte);
    out += UNRESERVED.test(ch) ? ch : `%${byte.toString(16).padStart(2, '0').toUpperCase()}`;
  }
  return out;
}

/** A query string on a POST (clients add some: the Anthropic SDK's `?beta=true`); the doors must ignore it. */
const postQuery = fc.oneof(
  { arbitrary: fc.constant(''), weight: 12 },
  { arbitrary: fc.constantFrom('?beta=true', '?beta=false', '?stream=true', '?model=gpt-4o', '?a=1&a=2', '?', '?%zz', '?beta'), weight: 2 },
  {
    arbitrary: fc
      .array(fc.tuple(hostileKey, hostileStrings.map((s) => s.slice(0, 200))), { minLength: 1, maxLength: 3 })
      .map((pairs) => `?${pairs.map(([k, v]) => `${encodeSegment(k)}=${encodeSegment(v)}`).join('&')}`),
    weight: 1,
  },
);

// ---- Valid bodies, the seeds of every mutation ----

const base64 = fc.uint8Array({ maxLength: 300 }).map((b) => btoa(String.fromCharCode(...b)));
const bodyOf = (valid: fc.Arbitrary<unknown>): fc.Arbitrary<string> => fc.oneof({ arbitrary: mutatedBody(valid), weight: 8 }, { arbitrary: brokenBody, weight: 1 });

/** Keeps the required fields and at most `n` of the optional ones, so most requests stay valid until mutated. */
const fewOptional =
  (required: readonly string[], n = 3) =>
  (b: Json): fc.Arbitrary<Json> =>
    fc.subarray(Object.keys(b), { maxLength: n }).map((keep) => Object.fromEntries(Object.entries(b).filter(([k]) => required.includes(k) || keep.includes(k))));

/** Mostly small; sometimes a bound the poor account's 40 credits cannot hold (a 402 before anything is held). */
const maxTokens = fc.oneof({ arbitrary: fc.integer({ min: 1, max: 64 }), weight: 5 }, { arbitrary: fc.constantFrom(500, 2_000, 4_000), weight: 1 });
const prompt = fc.oneof({ arbitrary: fc.string({ minLength: 1, maxLength: 200 }), weight: 6 }, { arbitrary: fc.constantFrom('Say hello.', 'Write a haiku about the sea.'), weight: 2 });

const validLegacy: fc.Arbitrary<unknown> = fc
  .record(
    {
      model: fc.constantFrom(...ALIASES),
      prompt: fc.oneof({ arbitrary: prompt, weight: 4 }, { arbitrary: prompt.map((p) => [p]), weight: 1 }),
      stream: fc.boolean(),
      stream_options: fc.constant({ include_usage: true }),
      max_tokens: maxTokens,
      temperature: fc.double({ min: 0, max: 2, noNaN: true }),
      top_p: fc.double({ min: 0, max: 1, noNaN: true }),
      n: fc.constant(1),
      logprobs: fc.integer({ min: 0, max: 5 }),
      echo: fc.constant(false),
      suffix: fc.constantFrom('', null),
      best_of: fc.constant(1),
      stop: fc.oneof(fc.string({ maxLength: 5 }), fc.array(fc.string({ maxLength: 5 }), { minLength: 1, maxLength: 4 })),
      presence_penalty: fc.double({ min: -2, max: 2, noNaN: true }),
      frequency_penalty: fc.double({ min: -2, max: 2, noNaN: true }),
      logit_bias: fc.constant({ '50256': -100 }),
      user: fc.string({ maxLength: 50 }),
      seed: fc.integer(),
    },
    { requiredKeys: ['model', 'prompt', 'stream', 'max_tokens'] },
  )
  // max_tokens kept: its default (16) is too small to refuse the poor account; a 'delete' mutation reaches it.
  .chain(fewOptional(['model', 'prompt', 'stream', 'max_tokens']));

const WEATHER_SCHEMA = { type: 'object', properties: { city: { type: 'string' } } };
const anthropicContent = fc.oneof(
  { arbitrary: prompt, weight: 6 },
  { arbitrary: prompt.map((text) => [{ type: 'text', text }]), weight: 2 },
  { arbitrary: fc.tuple(fc.constantFrom('image/png', 'image/jpeg', 'image/gif', 'image/webp'), base64).map(([media_type, data]) => [{ type: 'image', source: { type: 'base64', media_type, data: data || 'AA==' } }]), weight: 1 },
  { arbitrary: base64.map((data) => [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: data || 'AA==' } }]), weight: 1 },
);
const anthropicTurns = fc.oneof(
  { arbitrary: anthropicContent.map((content) => [{ role: 'user', content }]), weight: 6 },
  { arbitrary: fc.tuple(prompt, fc.string({ maxLength: 100 }), prompt).map(([a, b, c]) => [{ role: 'user', content: a }, { role: 'assistant', content: b }, { role: 'user', content: c }]), weight: 1 },
  {
    arbitrary: fc.constant([
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny' }] },
    ]),
    weight: 1,
  },
);
const validMessages: fc.Arbitrary<unknown> = fc
  .record(
    {
      model: fc.constantFrom(...ALIASES),
      max_tokens: maxTokens,
      messages: anthropicTurns,
      stream: fc.boolean(),
      system: fc.oneof(fc.string({ maxLength: 100 }), fc.string({ maxLength: 50 }).map((text) => [{ type: 'text', text }])),
      stop_sequences: fc.array(fc.string({ minLength: 1, maxLength: 5 }), { maxLength: 4 }),
      temperature: fc.double({ min: 0, max: 1, noNaN: true }),
      top_p: fc.double({ min: 0, max: 1, noNaN: true }),
      top_k: fc.integer({ min: 0, max: 500 }),
      tools: fc.constant([{ name: 'get_weather', description: 'w', input_schema: WEATHER_SCHEMA }]),
      tool_choice: fc.constantFrom({ type: 'auto' }, { type: 'any' }, { type: 'none' }, { type: 'tool', name: 'get_weather' }, { type: 'auto', disable_parallel_tool_use: true }),
      thinking: fc.constantFrom({ type: 'disabled' }, { type: 'adaptive' }, { type: 'enabled', budget_tokens: 1024 }),
      metadata: fc.string({ maxLength: 40 }).map((user_id) => ({ user_id })),
      service_tier: fc.constantFrom('auto', 'standard_only'),
    },
    { requiredKeys: ['model', 'max_tokens', 'messages', 'stream'] },
  )
  .chain(fewOptional(['model', 'max_tokens', 'messages', 'stream']));

/** The Responses body; `ids` are stored responses to continue or refer to (a snapshot taken when the property is built). */
function validResponses(ids: { responses: string[]; items: string[] }): fc.Arbitrary<unknown> {
  const idLike = (real: string[], shaped: fc.Arbitrary<string>): fc.Arbitrary<string> =>
    real.length === 0 ? shaped : fc.oneof({ arbitrary: fc.constantFrom(...real), weight: 3 }, { arbitrary: shaped, weight: 1 });
  const responseId = idLike(ids.responses, fc.stringMatching(/^resp_[A-Za-z0-9]{16,30}$/));
  const itemRef = idLike(ids.items, fc.stringMatching(/^(msg|fc|rs)_[A-Za-z0-9]{16,30}_\d$/));
  const item = fc.oneof(
    { arbitrary: prompt.map((content) => ({ role: 'user', content })), weight: 4 },
    { arbitrary: prompt.map((text) => ({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] })), weight: 2 },
    { arbitrary: fc.tuple(fc.constantFrom('system', 'developer'), fc.string({ maxLength: 50 })).map(([role, content]) => ({ role, content })), weight: 1 },
    { arbitrary: fc.tuple(fc.constantFrom('image/png', 'image/jpeg'), base64).map(([t, b]) => ({ role: 'user', content: [{ type: 'input_image', image_url: `data:${t};base64,${b}` }] })), weight: 1 },
    { arbitrary: itemRef.map((id) => ({ type: 'item_reference', id })), weight: 2 },
    { arbitrary: fc.constant({ type: 'reasoning', id: 'rs_x', summary: [] }), weight: 1 },
  );
  const input = fc.oneof(
    { arbitrary: prompt, weight: 4 },
    { arbitrary: fc.array(item, { minLength: 1, maxLength: 3 }), weight: 3 },
    {
      arbitrary: fc.constant([
        { role: 'user', content: 'Weather in Paris?' },
        { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call_output', call_id: 'call_1', output: 'sunny' },
      ]),
      weight: 1,
    },
  );
  return fc
    .record(
      {
        model: fc.constantFrom(...ALIASES),
        input,
        stream: fc.boolean(),
        previous_response_id: responseId,
        instructions: fc.string({ maxLength: 100 }),
        max_output_tokens: maxTokens,
        temperature: fc.double({ min: 0, max: 2, noNaN: true }),
        top_p: fc.double({ min: 0, max: 1, noNaN: true }),
        store: fc.boolean(),
        metadata: fc.dictionary(fc.string({ maxLength: 10 }), fc.string({ maxLength: 20 }), { maxKeys: 3 }),
        user: fc.string({ maxLength: 50 }),
        tools: fc.constant([{ type: 'function', name: 'get_weather', description: 'w', parameters: WEATHER_SCHEMA }]),
        tool_choice: fc.constantFrom('auto', 'none', 'required', { type: 'function', name: 'get_weather' }),
        parallel_tool_calls: fc.boolean(),
        text: fc.constantFrom({ format: { type: 'text' } }, { format: { type: 'json_object' } }, { format: { type: 'json_schema', name: 'x', schema: { type: 'object' } } }, { verbosity: 'low' }),
        reasoning: fc.constantFrom({ effort: 'low' }, { effort: 'none' }, { summary: 'auto' }),
        truncation: fc.constantFrom('auto', 'disabled'),
        include: fc.constant([]),
        top_logprobs: fc.integer({ min: 0, max: 20 }),
      },
      { requiredKeys: ['model', 'input', 'stream'] },
    )
    .chain(fewOptional(['model', 'input', 'stream']));
}

const validEmbeddings: fc.Arbitrary<unknown> = fc
  .record(
    {
      model: fc.oneof({ arbitrary: fc.constant(EMBED_ALIAS), weight: 6 }, { arbitrary: fc.constantFrom(...ALIASES, 'text-embedding-3-small'), weight: 1 }),
      input: fc.oneof(prompt, fc.array(prompt, { minLength: 1, maxLength: 5 })),
      dimensions: fc.oneof(fc.integer({ min: 1, max: 64 }), fc.constantFrom(256, 1536, 3072, 8192)),
      encoding_format: fc.constantFrom('float', 'base64', null),
      user: fc.string({ maxLength: 50 }),
    },
    { requiredKeys: ['model', 'input'] },
  )
  .chain(fewOptional(['model', 'input'], 2));

// ---- What a 200 of each door is ----

/** The last event of a stream ended as it should, and no event in it reports an error. */
function expectCleanStream(a: FuzzAnswer, last: (p: Json) => boolean): void {
  const payloads = ssePayloads(a.text) as Json[];
  expect(payloads.length, a.text.slice(-300)).toBeGreaterThan(0);
  expect(last(payloads.at(-1) ?? {}), a.text.slice(-300)).toBe(true);
  for (const p of payloads) expect(p.type === 'error' || p.error != null, `an error event in a 200 stream: ${JSON.stringify(p).slice(0, 300)}`).toBe(false);
}

function checkLegacySuccess(a: FuzzAnswer): void {
  if (a.status >= 400) return;
  expect(a.status).toBe(200);
  if (isStream(a)) {
    expect(a.text.endsWith('data: [DONE]\n\n'), a.text.slice(-300)).toBe(true);
    expectCleanStream(a, (p) => p.object === 'text_completion');
  } else expect((JSON.parse(a.text) as Json).object).toBe('text_completion');
}

function checkMessagesSuccess(a: FuzzAnswer): void {
  if (a.status >= 400) return;
  expect(a.status).toBe(200);
  if (isStream(a)) {
    expect(a.text.endsWith('event: message_stop\ndata: {"type":"message_stop"}\n\n'), a.text.slice(-300)).toBe(true);
    expectCleanStream(a, (p) => p.type === 'message_stop');
  } else expect((JSON.parse(a.text) as Json).type).toBe('message');
}

function checkResponsesSuccess(a: FuzzAnswer, owner: string | null): void {
  if (a.status >= 400) return;
  expect(a.status).toBe(200);
  let response: Json;
  if (isStream(a)) {
    expectCleanStream(a, (p) => p.type === 'response.completed' || p.type === 'response.incomplete');
    response = (ssePayloads(a.text).at(-1) as { response: Json }).response;
  } else response = JSON.parse(a.text) as Json;
  expect(response.object).toBe('response');
  expect(['completed', 'incomplete']).toContain(response.status);
  if (owner !== null) remember(response, owner);
}

function checkEmbeddingsSuccess(a: FuzzAnswer): void {
  if (a.status >= 400) return;
  expect(a.status).toBe(200);
  const body = JSON.parse(a.text) as { object: string; data: unknown[]; model: string };
  expect(body.object).toBe('list');
  expect(body.model).toBe(EMBED_ALIAS);
  expect(body.data.length).toBeGreaterThan(0);
}

const runs = (n: number): { numRuns: number } & typeof PARAMS => ({ ...PARAMS, numRuns: n });

describe('fuzz: the legacy completions, Anthropic Messages, Responses and embeddings doors', () => {
  it('POST /v1/completions (legacy; streaming and not)', async () => {
    await fc.assert(
      fc.asyncProperty(authArb(0), framing, bodyOf(validLegacy), postQuery, async (auth, f, body, q) => {
        const answer = await exchange({ method: 'POST', path: `/v1/completions${q}`, headers: headersOf(auth, f), body, chunkBytes: f.chunkBytes }, 'openai', 'charge');
        checkLegacySuccess(answer);
      }),
      runs(400),
    );
  }, 60_000);

  it('POST /v1/messages and /v1/messages/count_tokens (Anthropic envelope on every refusal)', async () => {
    const path = fc.oneof(
      { arbitrary: fc.constant('/v1/messages'), weight: 12 },
      { arbitrary: fc.constant('/v1/messages/count_tokens'), weight: 6 },
      { arbitrary: fc.constantFrom('/v1/messages/', '/v1/messages/batches', '/v1/messages/count_tokens/', '/v1/messages/%00', '/v1/messages/..%2Fchat%2Fcompletions'), weight: 1 },
    );
    await fc.assert(
      fc.asyncProperty(authArb(6), framing, path, bodyOf(validMessages), postQuery, async (auth, f, p, body, q) => {
        const counting = p.startsWith('/v1/messages/count_tokens');
        const answer = await exchange({ method: 'POST', path: `${p}${q}`, headers: headersOf(auth, f), body, chunkBytes: f.chunkBytes }, 'anthropic', counting ? 'none' : 'charge');
        if (answer.status >= 400) return;
        if (counting) {
          const counted = JSON.parse(answer.text) as Json;
          expect(Object.keys(counted)).toEqual(['input_tokens']);
          expect(Number.isSafeInteger(counted.input_tokens) && (counted.input_tokens as number) >= 0).toBe(true);
        } else checkMessagesSuccess(answer);
      }),
      runs(400),
    );
  }, 60_000);

  it('POST /v1/responses (streaming and not; previous_response_id and item_reference to real and made-up ids)', async () => {
    const ids = { responses: stored.map((s) => s.id), items: stored.flatMap((s) => s.items) };
    await fc.assert(
      fc.asyncProperty(authArb(1), framing, bodyOf(validResponses(ids)), postQuery, async (auth, f, body, q) => {
        const answer = await exchange({ method: 'POST', path: `/v1/responses${q}`, headers: headersOf(auth, f), body, chunkBytes: f.chunkBytes }, 'openai', 'charge');
        const actor = actorOf(auth, answer);
        checkResponsesSuccess(answer, actor === null ? null : ownerOf(actor));
      }),
      runs(500),
    );
  }, 60_000);

  it('GET and DELETE /v1/responses/{id}: real ids (own, another account\'s, another environment\'s, deleted), look-alikes, garbage', async () => {
    type Target = { kind: 'real'; pick: number; mangle: 'none' | 'upper' | 'suffix' | 'cut' | 'flip' | 'item' } | { kind: 'shaped'; id: string } | { kind: 'raw'; segment: string };
    const target: fc.Arbitrary<Target> = fc.oneof(
      { arbitrary: fc.record({ kind: fc.constant('real' as const), pick: fc.nat(), mangle: fc.constant('none' as const) }), weight: 8 },
      { arbitrary: fc.record({ kind: fc.constant('real' as const), pick: fc.nat(), mangle: fc.constantFrom('upper' as const, 'suffix' as const, 'cut' as const, 'flip' as const, 'item' as const) }), weight: 2 },
      { arbitrary: fc.record({ kind: fc.constant('shaped' as const), id: fc.stringMatching(/^(resp|msg|fc)_[A-Za-z0-9]{1,40}(_\d)?$/) }), weight: 2 },
      {
        arbitrary: fc.record({
          kind: fc.constant('raw' as const),
          segment: fc.oneof(
            hostileStrings.map((s) => encodeSegment(s.slice(0, 2_000))),
            fc.constantFrom('%', '%zz', '%00', '%E0%A4%A', '%2F..%2F', '..', '.', '%20', ';', '%FF%FE', 'a%2Fb', '*', 'resp_', 'resp_%00', ''),
          ),
        }),
        weight: 2,
      },
    );
    const method = fc.oneof({ arbitrary: fc.constant('GET'), weight: 3 }, { arbitrary: fc.constant('DELETE'), weight: 1 }, { arbitrary: fc.constantFrom('POST', 'PUT', 'PATCH'), weight: 1 });
    const query = fc.oneof({ arbitrary: fc.constant(''), weight: 6 }, { arbitrary: fc.constantFrom('?include[]=message.output_text.logprobs', '?stream=true', '?starting_after=3', '?a=%zz'), weight: 1 });
    await fc.assert(
      fc.asyncProperty(authArb(1), framing, target, method, query, async (auth, f, t, m, q) => {
        let entry: Stored | undefined;
        let segment: string;
        if (t.kind === 'real') {
          const s = stored[t.pick % stored.length] as Stored;
          const mangled = {
            none: s.id,
            upper: s.id.toUpperCase(),
            suffix: `${s.id}x`,
            cut: s.id.slice(0, -1),
            flip: `${s.id.slice(0, -1)}${s.id.endsWith('a') ? 'b' : 'a'}`,
            item: s.items[0] ?? `msg_${s.id.slice(5)}_0`,
          }[t.mangle];
          if (t.mangle === 'none') entry = s;
          segment = mangled;
        } else segment = t.kind === 'shaped' ? t.id : t.segment;
        const headers = { ...f.extra, ...authHeader(auth) };
        const path = `/v1/responses/${segment}${q}`;
        const answer = await exchange({ method: m, path, headers }, 'openai', 'none');
        const actor = actorOf(auth, answer);
        const mine = entry !== undefined && actor !== null && entry.owner === ownerOf(actor) && !entry.deleted;
        const where = `${m} ${path.slice(0, 120)} as ${actor ?? 'nobody'} (owner ${entry?.owner ?? 'none'}${entry?.deleted ? ', deleted' : ''})`;
        if (m === 'GET' || m === 'DELETE') {
          if (answer.status === 200) {
            expect(mine, `${where} -> 200: someone else's, a deleted or a made-up response was ${m === 'GET' ? 'read' : 'deleted'}`).toBe(true);
            const body = JSON.parse(answer.text) as Json;
            expect(body.id).toBe(entry?.id);
            if (m === 'GET') expect(body.object).toBe('response');
            else {
              expect(body).toEqual({ id: entry?.id, object: 'response', deleted: true });
              (entry as Stored).deleted = true;
            }
          } else if (mine) throw new Error(`${where} -> ${answer.status}: its owner could not ${m === 'GET' ? 'read' : 'delete'} a stored response: ${answer.text.slice(0, 200)}`);
        } else expect(answer.status, where).toBeGreaterThanOrEqual(400);
      }),
      runs(500),
    );
  }, 60_000);

  it('POST /v1/embeddings (an embedding alias served by the sandbox)', async () => {
    await fc.assert(
      fc.asyncProperty(authArb(1), framing, bodyOf(validEmbeddings), postQuery, async (auth, f, body, q) => {
        const answer = await exchange({ method: 'POST', path: `/v1/embeddings${q}`, headers: headersOf(auth, f), body, chunkBytes: f.chunkBytes }, 'openai', 'charge');
        checkEmbeddingsSuccess(answer);
      }),
      runs(400),
    );
  }, 60_000);

  it('leaves a ledger whose journal agrees with every balance', async () => {
    expect((await gw.store.ledger.audit()).findings).toEqual([]);
  });

  it('reached past validation: answers, streams, refusals for credits, stored responses read and deleted', () => {
    const seen = (prefix: string): number => [...outcomes].filter(([k]) => k.startsWith(prefix)).reduce((s, [, n]) => s + n, 0);
    console.log(`[fuzz-doors] outcomes: ${JSON.stringify(Object.fromEntries([...outcomes].sort()))}`);
    for (const door of ['/v1/completions', '/v1/messages', '/v1/responses']) {
      expect(seen(`POST ${door} 200 stream`), door).toBeGreaterThan(10);
      expect(seen(`POST ${door} 200`) - seen(`POST ${door} 200 stream`), door).toBeGreaterThan(10);
      expect(seen(`POST ${door} 402`), door).toBeGreaterThan(3);
    }
    expect(seen('POST /v1/messages/count_tokens 200')).toBeGreaterThan(10);
    expect(seen('POST /v1/embeddings 200')).toBeGreaterThan(20);
    expect(seen('POST /v1/embeddings 402')).toBeGreaterThan(0);
    expect(seen('GET /v1/responses/{id} 200')).toBeGreaterThan(10);
    expect(seen('GET /v1/responses/{id} 404')).toBeGreaterThan(10);
    expect(seen('DELETE /v1/responses/{id} 200')).toBeGreaterThan(3);
  });
});

describe('the Anthropic fuzz oracle', () => {
  const answer = (status: number, text: string, contentType = 'application/json'): FuzzAnswer => ({ status, contentType, text, ms: 1 });
  const envelope = (type: string, message = 'm'): string => JSON.stringify({ type: 'error', error: { type, message } });

  it("accepts Anthropic's envelope with the status's type, and refuses a 5xx, OpenAI's envelope, a wrong type, extra keys or plain text", () => {
    expect(anthropicBreach(answer(400, envelope('invalid_request_error')))).toBeNull();
    expect(anthropicBreach(answer(402, envelope('billing_error')))).toBeNull();
    expect(anthropicBreach(answer(200, 'anything', 'text/event-stream'))).toBeNull();
    expect(anthropicBreach(answer(500, envelope('api_error')))).toMatch(/status 500/);
    expect(anthropicBreach(answer(400, JSON.stringify({ error: { message: 'm', type: 'invalid_request_error', param: null, code: 'x' } })))).toMatch(/envelope/);
    expect(anthropicBreach(answer(401, envelope('invalid_request_error')))).toMatch(/expected authentication_error/);
    expect(anthropicBreach(answer(400, JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'm', code: 'x' } })))).toMatch(/keys/);
    expect(anthropicBreach(answer(400, envelope('invalid_request_error', '')))).toMatch(/message/);
    expect(anthropicBreach(answer(413, 'Payload Too Large', 'text/plain'))).toMatch(/content-type/);
  });
});
