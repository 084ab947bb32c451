/**
 * POST /v1/embeddings end to end (src/http/embeddings.ts, src/embeddings/): a real gateway (SQLite file, and
 * once PostgreSQL) whose embedding aliases target real HTTP upstreams written here (node:http through the
 * fixture server): OpenAI-compatible ones that answer OpenAI's embeddings shape with known vectors and a
 * `usage.prompt_tokens`, scripted failures (503, 500, 400, a refused port, too few vectors, non-numbers),
 * Gemini's `batchEmbedContents`, and the sandbox. Driven by the real clients: `openai`'s `embeddings.create`
 * (base64 by default, decoded) and the Vercel AI SDK's `embed` / `embedMany`.
 *
 * Proven: no alias configured means /v1/models lists exactly the four chat aliases and the door answers 404;
 * vectors reach the client exactly (float, and base64 within float32 precision); `dimensions` and `user`
 * are forwarded and upstreams are asked for floats; the charge is ceil(prompt_tokens x price / 1000) of the
 * upstream's count (the gateway's estimate for Gemini), taken once from the balance and reported in
 * /v1/usage; failover on 503 / refused connection / a bad 200 answer, none on a 400; all-failed answers per
 * docs/errors.md with the hold voided; the sandbox is deterministic and serves test keys without touching a
 * paid upstream; bad bodies are 400s naming the parameter; too few credits is a 402 before any upstream call.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createOpenAI } from '@ai-sdk/openai';
import { embed, embedMany } from 'ai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, type GatewayConfig } from '../../src/config/schema.js';
import { silentLogger } from '../../src/core/logger.js';
import { startGateway, type RunningGateway } from '../../src/runtime/node/server.js';
import type { Environment } from '../../src/store/types.js';
import { instantSandboxConfig, seedAccount, startTestGateway, type Seeded, type SeedOptions, type TestGateway } from '../helpers/gateway.js';
import { closedPort, startFixtureServer, type FixtureServer, type RecordedRequest, type Scenario } from '../providers/helpers/fixture-server.js';
import { createTestSchema, dropTestSchema, POSTGRES_URL } from '../store/postgres-harness.js';

// ---- upstreams -----------------------------------------------------------------------------------------

/** Credits per 1,000 input tokens of every embedding alias here: ceil() matters at these sizes. */
const PRICE = 130;
/** What the OpenAI-compatible upstreams say each input cost (below the gateway's bytes/3 estimate of TEXTS). */
const TOKENS_PER_INPUT = 9;
/** The upstreams' vector size when no `dimensions` is asked. */
const UPSTREAM_DIMS = 6;
const TEXTS = ['The lighthouse keeper wrote a letter.', 'Tides follow the moon across the bay.'];
const SECRETS = { oa: 'sk-upstream-oa', gemini: 'gk-upstream-gemini' };

/** A known vector per (upstream, text): thirds and sevenths, so float32 cannot hold them exactly. */
function vectorOf(salt: number, text: string, dims: number): number[] {
  let h = salt;
  for (let i = 0; i < text.length; i++) h = (h * 31 + text.charCodeAt(i)) % 9973;
  return Array.from({ length: dims }, (_, j) => ((h * (j + 1)) % 1000) / 3000 - 1 / 7);
}

const expectedCredits = (tokens: number): number => Math.ceil((tokens * PRICE) / 1000);
/** The gateway's estimate (src/billing/token-estimate.ts): UTF-8 bytes / 3, rounded up, per input. */
const estimateOf = (texts: readonly string[]): number => texts.reduce((sum, t) => sum + Math.ceil(Buffer.byteLength(t) / 3), 0);

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

interface OpenAIEmbeddingBody {
  model: string;
  input: string[];
  encoding_format?: string;
  dimensions?: number;
  user?: string;
}

/** OpenAI's embeddings answer, its rows in reverse order (as some servers send them; `index` places them). */
const openaiEmbeddings =
  (salt: number): Scenario =>
  (_req, res, body) => {
    const b = JSON.parse(body) as OpenAIEmbeddingBody;
    const dims = b.dimensions ?? UPSTREAM_DIMS;
    const data = b.input.map((t, index) => ({ object: 'embedding', index, embedding: vectorOf(salt, t, dims) })).reverse();
    const tokens = TOKENS_PER_INPUT * b.input.length;
    sendJson(res, 200, { object: 'list', data, model: b.model, usage: { prompt_tokens: tokens, total_tokens: tokens } });
  };

const openaiError =
  (status: number, message: string, type = 'invalid_request_error'): Scenario =>
  (_req, res) =>
    sendJson(res, status, { error: { message, type, param: null, code: null } });

const SALT = { oa: 1, backup: 2, paid: 3 } as const;

const SCENARIOS: Record<string, Scenario> = {
  oa: openaiEmbeddings(SALT.oa),
  backup: openaiEmbeddings(SALT.backup),
  paid: openaiEmbeddings(SALT.paid),
  down: openaiError(503, 'The server is overloaded or not ready yet.', 'server_error'),
  broken: openaiError(500, 'The server had an error while processing your request.', 'server_error'),
  // OpenAI's own words for an embeddings input over the model's context.
  'too-long': openaiError(
    400,
    "This model's maximum context length is 8192 tokens, however you requested 8721 tokens (8721 in your prompt; 0 for the completion). Please reduce your prompt; or completion length.",
  ),
  // text-embedding-ada-002 given `dimensions`.
  'no-dims': openaiError(400, 'This model does not support specifying dimensions.'),
  // 200, one vector short.
  short: (_req, res, body) => {
    const b = JSON.parse(body) as OpenAIEmbeddingBody;
    const data = b.input.slice(1).map((t, index) => ({ object: 'embedding', index, embedding: vectorOf(9, t, UPSTREAM_DIMS) }));
    sendJson(res, 200, { object: 'list', data, model: b.model, usage: { prompt_tokens: 5, total_tokens: 5 } });
  },
  // 200, numbers sent as strings.
  strings: (_req, res, body) => {
    const b = JSON.parse(body) as OpenAIEmbeddingBody;
    const data = b.input.map((t, index) => ({ object: 'embedding', index, embedding: vectorOf(9, t, UPSTREAM_DIMS).map(String) }));
    sendJson(res, 200, { object: 'list', data, model: b.model, usage: { prompt_tokens: 5, total_tokens: 5 } });
  },
  // The answer after 400 ms: long enough for a client to hang up while the upstream works.
  slow: (req, res, body) => {
    setTimeout(() => void openaiEmbeddings(SALT.oa)(req, res, body), 400);
  },
  // Gemini's batchEmbedContents: one `values` per request, no token count.
  gemini: (_req, res, body) => {
    const b = JSON.parse(body) as { requests: { content: { parts: { text: string }[] }; outputDimensionality?: number }[] };
    const embeddings = b.requests.map((r) => ({ values: vectorOf(7, r.content.parts[0]?.text ?? '', r.outputDimensionality ?? UPSTREAM_DIMS) }));
    sendJson(res, 200, { embeddings });
  },
};

let upstreams: FixtureServer;
let refusedPort: number;

/** The requests `scenario` received since `mark` (an index into the fixture server's log). */
const callsTo = (scenario: string, mark = 0): RecordedRequest[] => upstreams.requests.slice(mark).filter((r) => r.path.startsWith(`/${scenario}/`));
const mark = (): number => upstreams.requests.length;

// ---- gateways ------------------------------------------------------------------------------------------

/** Every embedding alias of the main gateway, in config order, with its targets (provider/model). */
const EMBEDDINGS: Record<string, [string, string][]> = {
  'svc-embed': [['oa', 'text-embedding-3-small']],
  'svc-embed-failover': [
    ['down', 'embed-down'],
    ['backup', 'embed-backup'],
  ],
  'svc-embed-refused': [
    ['refused', 'embed-refused'],
    ['backup', 'embed-backup'],
  ],
  'svc-embed-too-long': [
    ['too-long', 'embed-too-long'],
    ['backup', 'embed-backup'],
  ],
  'svc-embed-no-dims': [
    ['no-dims', 'text-embedding-ada-002'],
    ['backup', 'embed-backup'],
  ],
  'svc-embed-unavailable': [
    ['down', 'embed-down-2'],
    ['refused', 'embed-refused-2'],
  ],
  'svc-embed-broken': [
    ['down', 'embed-down-3'],
    ['broken', 'embed-broken'],
  ],
  'svc-embed-short': [
    ['short', 'embed-short'],
    ['backup', 'embed-backup'],
  ],
  'svc-embed-short-only': [['short', 'embed-short-2']],
  'svc-embed-strings-only': [['strings', 'embed-strings']],
  'svc-embed-gemini': [['gemini', 'text-embedding-004']],
  'svc-embed-sandbox': [['sandbox', 'sandbox-embed']],
  'svc-embed-paid': [['paid', 'text-embedding-3-large']],
  'svc-embed-slow': [['slow', 'embed-slow']],
};

function embeddingConfig(): GatewayConfig {
  const openaiCompatible = (base_url: string) => ({ type: 'openai-compatible', base_url });
  const sandbox = (model: string) => ({ targets: [{ provider: 'sandbox', model }] });
  return parseConfig({
    providers: {
      sandbox: { type: 'sandbox' },
      ...Object.fromEntries(Object.keys(SCENARIOS).filter((s) => s !== 'gemini').map((s) => [s, openaiCompatible(upstreams.baseUrl(s))])),
      refused: openaiCompatible(`http://127.0.0.1:${refusedPort}/v1`),
      gemini: { type: 'gemini', base_url: upstreams.baseUrl('gemini') },
    },
    // Breakers stay closed: the scripted failures repeat across cases and must not change later answers.
    health: { failure_threshold: 1000 },
    aliases: { 'svc-fast': sandbox('sandbox-fast'), 'svc-code': sandbox('sandbox-code'), 'svc-smart': sandbox('sandbox-smart') },
    embeddings: Object.fromEntries(
      Object.entries(EMBEDDINGS).map(([alias, targets]) => [
        alias,
        { credits_per_1k_tokens: PRICE, targets: targets.map(([provider, model]) => ({ provider, model })), description: `embeddings via ${alias}` },
      ]),
    ),
  });
}

interface Gateway extends RunningGateway {
  seed(opts?: SeedOptions): Promise<Seeded>;
}

/** startTestGateway with upstream secrets (the Gemini key header is checked), on SQLite or the given URL. */
async function startEmbeddingGateway(config: GatewayConfig, databaseUrl?: string): Promise<Gateway> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-gw-embed-'));
  const gw = await startGateway({ config, secrets: SECRETS, databaseUrl: databaseUrl ?? `sqlite:${join(dir, 'gateway.db')}`, port: 0, logger: silentLogger });
  return {
    ...gw,
    seed: (o) => seedAccount(gw.store, o),
    async close() {
      await gw.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

// ---- what the tests read -------------------------------------------------------------------------------

interface Svc {
  requested_model: string;
  routed_model: string;
  routed_provider: string;
  credits_used: number;
  balance_remaining: number | null;
  tokens_metered: { prompt: number; completion: number; total: number };
  attempts?: { provider: string; model: string; outcome: string }[];
}

interface EmbeddingAnswer {
  object: string;
  data: { object: string; index: number; embedding: number[] | string }[];
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
  svc: Svc;
}

interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

interface UsageReport {
  total_requests: number;
  total_prompt_tokens: number;
  total_credits_spent: number;
  breakdown_by_model: Record<string, { requests: number; prompt_tokens: number; completion_tokens: number; credits: number }>;
}

const svcOf = (r: unknown): Svc => (r as { svc: Svc }).svc;

function postEmbeddings(gw: { url: string }, secret: string, body: unknown): Promise<Response> {
  return fetch(`${gw.url}/embeddings`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

async function usageToday(gw: { url: string }, secret: string, query = ''): Promise<Response> {
  const today = new Date().toISOString().slice(0, 10);
  // From yesterday: a run across midnight UTC records its first requests on the day before.
  const since = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
  return fetch(`${gw.url}/usage?start_date=${since}&end_date=${today}${query}`, { headers: { authorization: `Bearer ${secret}` } });
}

/** The account's books: available credits, credits held, holds pending. */
async function books(gw: { store: RunningGateway['store'] }, account: Seeded, environment: Environment = 'live') {
  const b = await gw.store.ledger.balance(account.accountId, environment);
  return { available: b.purchased + b.earned, reserved: b.reserved, pending: await gw.store.ledger.countPendingHolds(account.accountId) };
}

/** OpenAI's base64 form: little-endian float32. */
function decodeBase64(b64: string): number[] {
  const bytes = Buffer.from(b64, 'base64');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return Array.from({ length: bytes.length / 4 }, (_, i) => view.getFloat32(i * 4, true));
}

const norm = (v: readonly number[]): number => Math.sqrt(v.reduce((s, x) => s + x * x, 0));
const bodyOf = (r: RecordedRequest | undefined): OpenAIEmbeddingBody => JSON.parse(r?.body ?? 'null') as OpenAIEmbeddingBody;

const GRANT = 100_000;
const CHAT_ALIASES = ['svc-auto', 'svc-fast', 'svc-code', 'svc-smart'];

beforeAll(async () => {
  upstreams = await startFixtureServer(SCENARIOS);
  refusedPort = await closedPort();
});
afterAll(async () => {
  await upstreams?.close();
});

// ---- 1. no embeddings configured ----------------------------------------------------------------------

describe('without an embeddings config', () => {
  let gw: TestGateway;
  let account: Seeded;
  beforeAll(async () => {
    gw = await startTestGateway({ config: instantSandboxConfig() });
    account = await gw.seed({ purchased: GRANT });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('/v1/models lists exactly the four chat aliases', async () => {
    const res = await fetch(`${gw.url}/models`, { headers: { authorization: `Bearer ${account.secret}` } });
    const list = (await res.json()) as { data: { id: string }[] };
    expect(list.data.map((m) => m.id)).toEqual(CHAT_ALIASES);
    expect((await fetch(`${gw.url}/models/svc-embed`, { headers: { authorization: `Bearer ${account.secret}` } })).status).toBe(404);
  });

  it('POST /v1/embeddings is a 404 model_not_found naming `model`, and moves no credits', async () => {
    const before = await books(gw, account);
    const res = await postEmbeddings(gw, account.secret, { model: 'svc-embed', input: 'hello' });
    expect(res.status).toBe(404);
    const body = (await res.json()) as ErrorBody;
    expect(body.error).toMatchObject({ type: 'not_found_error', code: 'model_not_found', param: 'model' });
    expect(body.error.message).toContain('svc-embed');
    // The openai client sees the same refusal.
    const client = new OpenAI({ baseURL: gw.url, apiKey: account.secret, maxRetries: 0 });
    await expect(client.embeddings.create({ model: 'svc-embed', input: 'hello' })).rejects.toMatchObject({ status: 404, code: 'model_not_found', param: 'model' });
    expect(await books(gw, account)).toEqual(before);
    expect(before).toEqual({ available: GRANT, reserved: 0, pending: 0 });
    expect(((await (await usageToday(gw, account.secret)).json()) as UsageReport).total_requests).toBe(0);
  });
});

// ---- 2 to 10: embedding aliases on SQLite ---------------------------------------------------------------

describe('with embedding aliases', () => {
  let gw: Gateway;
  beforeAll(async () => {
    gw = await startEmbeddingGateway(embeddingConfig());
  });
  afterAll(async () => {
    await gw?.close();
  });

  /** A fresh account (its own books and usage) and an openai client for it. */
  async function fresh(opts: SeedOptions = { purchased: GRANT }): Promise<{ account: Seeded; client: OpenAI }> {
    const account = await gw.seed(opts);
    return { account, client: new OpenAI({ baseURL: gw.url, apiKey: account.secret, maxRetries: 0 }) };
  }

  /** Nothing was charged or left held, and nothing reached /v1/usage. */
  async function expectUntouched(account: Seeded, environment: Environment = 'live'): Promise<void> {
    expect(await books(gw, account, environment)).toEqual({ available: GRANT, reserved: 0, pending: 0 });
    expect(((await (await usageToday(gw, account.secret)).json()) as UsageReport).total_requests).toBe(0);
  }

  describe('an OpenAI-compatible target', () => {
    it("gives the openai client exactly the upstream's vectors, as base64 (its default) and as floats", async () => {
      const { client } = await fresh();
      const m = mark();
      const decoded = await client.embeddings.create({ model: 'svc-embed', input: TEXTS });
      const floats = await client.embeddings.create({ model: 'svc-embed', input: TEXTS, encoding_format: 'float' });
      const expected = TEXTS.map((t) => vectorOf(SALT.oa, t, UPSTREAM_DIMS));
      // Floats are relayed exactly; base64 carries float32, so it decodes to the nearest float32 of each.
      expect(floats.data.map((d) => d.embedding)).toEqual(expected);
      expect(decoded.data.map((d) => d.embedding)).toEqual(expected.map((v) => v.map(Math.fround)));
      expect(decoded.data.map((d) => d.index)).toEqual([0, 1]);
      for (const [i, v] of expected.entries()) {
        const got = decoded.data[i]?.embedding ?? [];
        v.forEach((x, j) => expect(Math.abs((got[j] ?? NaN) - x)).toBeLessThanOrEqual(Math.abs(x) * 2 ** -23));
      }
      // The upstream was asked for floats both times, with the alias's model and the texts as sent.
      const sent = callsTo('oa', m);
      expect(sent).toHaveLength(2);
      for (const r of sent) {
        expect(r.path).toBe('/oa/v1/embeddings');
        expect(r.headers.authorization).toBe(`Bearer ${SECRETS.oa}`);
        expect(bodyOf(r)).toEqual({ model: 'text-embedding-3-small', input: TEXTS, encoding_format: 'float' });
      }
    });

    it('answers the documented shape, and base64 is little-endian float32 of the same numbers', async () => {
      const { account } = await fresh();
      const res = await postEmbeddings(gw, account.secret, { model: 'svc-embed', input: TEXTS[0], encoding_format: 'base64' });
      expect(res.status).toBe(200);
      const body = (await res.json()) as EmbeddingAnswer;
      expect(body).toMatchObject({ object: 'list', model: 'svc-embed', usage: { prompt_tokens: TOKENS_PER_INPUT, total_tokens: TOKENS_PER_INPUT } });
      expect(body.data).toHaveLength(1);
      expect(body.data[0]).toMatchObject({ object: 'embedding', index: 0 });
      expect(typeof body.data[0]?.embedding).toBe('string');
      expect(decodeBase64(body.data[0]?.embedding as string)).toEqual(vectorOf(SALT.oa, TEXTS[0] as string, UPSTREAM_DIMS).map(Math.fround));
    });

    it('forwards `dimensions` and `user`', async () => {
      const { client } = await fresh();
      const m = mark();
      const r = await client.embeddings.create({ model: 'svc-embed', input: TEXTS[1] as string, dimensions: 3, user: 'user-42', encoding_format: 'float' });
      expect(r.data[0]?.embedding).toEqual(vectorOf(SALT.oa, TEXTS[1] as string, 3));
      expect(bodyOf(callsTo('oa', m)[0])).toEqual({ model: 'text-embedding-3-small', input: [TEXTS[1]], encoding_format: 'float', dimensions: 3, user: 'user-42' });
    });

    it("charges ceil(prompt_tokens x price / 1000) of the upstream's count, once, and reports it in /v1/usage", async () => {
      const { account, client } = await fresh();
      const r = await client.embeddings.create({ model: 'svc-embed', input: TEXTS });
      const tokens = TOKENS_PER_INPUT * TEXTS.length;
      const credits = expectedCredits(tokens);
      expect(credits).toBe(3); // 18 x 130 / 1000 = 2.34, rounded up
      expect(r.usage).toEqual({ prompt_tokens: tokens, total_tokens: tokens });
      expect(svcOf(r)).toMatchObject({
        requested_model: 'svc-embed',
        routed_model: 'oa/text-embedding-3-small',
        routed_provider: 'oa',
        credits_used: credits,
        balance_remaining: GRANT - credits,
        tokens_metered: { prompt: tokens, completion: 0, total: tokens },
      });
      expect(svcOf(r).attempts).toBeUndefined();
      expect(await books(gw, account)).toEqual({ available: GRANT - credits, reserved: 0, pending: 0 });
      const usage = (await (await usageToday(gw, account.secret)).json()) as UsageReport;
      expect(usage.total_requests).toBe(1);
      expect(usage.total_credits_spent).toBe(credits);
      expect(usage.breakdown_by_model).toEqual({ 'svc-embed': { requests: 1, prompt_tokens: tokens, completion_tokens: 0, credits } });
    });

    // docs/api.md: GET /v1/usage?...&model=ALIAS. The rows are recorded under the embedding alias, so it filters too.
    it('/v1/usage?model= takes the embedding alias it reports', async () => {
      const { account, client } = await fresh();
      await client.embeddings.create({ model: 'svc-embed', input: TEXTS });
      const res = await usageToday(gw, account.secret, '&model=svc-embed');
      expect(res.status, await res.clone().text()).toBe(200);
      expect(((await res.json()) as UsageReport).total_credits_spent).toBe(expectedCredits(TOKENS_PER_INPUT * TEXTS.length));
    });

    it('/v1/models lists the embedding aliases after the four chat aliases, and GET /v1/models/svc-embed works', async () => {
      const { account } = await fresh();
      const auth = { headers: { authorization: `Bearer ${account.secret}` } };
      const list = (await (await fetch(`${gw.url}/models`, auth)).json()) as { data: { id: string; object: string }[] };
      expect(list.data.map((m) => m.id)).toEqual([...CHAT_ALIASES, ...Object.keys(EMBEDDINGS)]);
      const res = await fetch(`${gw.url}/models/svc-embed`, auth);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({
        id: 'svc-embed',
        object: 'model',
        owned_by: 'svc-gateway',
        pricing: { input_credits_per_1k: PRICE },
        description: 'embeddings via svc-embed',
      });
      const client = new OpenAI({ baseURL: gw.url, apiKey: account.secret, maxRetries: 0 });
      expect((await client.models.retrieve('svc-embed')).id).toBe('svc-embed');
    });
  });

  describe('failover', () => {
    it.each([
      ['answers 503', 'svc-embed-failover', 'down', 'embed-down', 'http_503'],
      ['refuses connections', 'svc-embed-refused', 'refused', 'embed-refused', 'connect'],
    ])('first target %s: the second serves, both are in svc.attempts, one charge', async (_what, alias, provider, model, outcome) => {
      const { account, client } = await fresh();
      const m = mark();
      const r = await client.embeddings.create({ model: alias, input: TEXTS, encoding_format: 'float' });
      expect(r.data.map((d) => d.embedding)).toEqual(TEXTS.map((t) => vectorOf(SALT.backup, t, UPSTREAM_DIMS)));
      expect(svcOf(r).attempts).toEqual([
        { provider, model, outcome },
        { provider: 'backup', model: 'embed-backup', outcome: 'ok' },
      ]);
      expect(svcOf(r).routed_model).toBe('backup/embed-backup');
      if (provider === 'down') expect(callsTo('down', m)).toHaveLength(1);
      expect(callsTo('backup', m)).toHaveLength(1);
      const credits = expectedCredits(TOKENS_PER_INPUT * TEXTS.length);
      expect(svcOf(r).credits_used).toBe(credits);
      expect(await books(gw, account)).toEqual({ available: GRANT - credits, reserved: 0, pending: 0 });
      const usage = (await (await usageToday(gw, account.secret)).json()) as UsageReport;
      expect(usage.breakdown_by_model[alias]).toEqual({ requests: 1, prompt_tokens: TOKENS_PER_INPUT * TEXTS.length, completion_tokens: 0, credits });
    });

    it('first target answers 400 (the request itself): no failover, a 400 to the client, nothing charged', async () => {
      const { account, client } = await fresh();
      const m = mark();
      const err = await client.embeddings.create({ model: 'svc-embed-too-long', input: TEXTS }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      expect(err).toMatchObject({ status: 400, type: 'invalid_request_error' });
      expect((err as InstanceType<typeof OpenAI.APIError>).headers?.get('x-should-retry')).toBe('false');
      expect(callsTo('too-long', m)).toHaveLength(1);
      expect(callsTo('backup', m)).toHaveLength(0);
      await expectUntouched(account);
    });

    // An embeddings body has no `messages`: the client must be told the too-long field is `input`.
    it("an upstream's context-length 400 names the embeddings body's `input`, not a chat field", async () => {
      const { account } = await fresh();
      const res = await postEmbeddings(gw, account.secret, { model: 'svc-embed-too-long', input: TEXTS });
      expect(res.status).toBe(400);
      expect(((await res.json()) as ErrorBody).error).toMatchObject({ code: 'context_length_exceeded', param: 'input' });
    });

    it('a 400 about a parameter this model does not take (dimensions on ada-002) hands the request to the next target', async () => {
      const { account, client } = await fresh();
      const m = mark();
      const r = await client.embeddings.create({ model: 'svc-embed-no-dims', input: TEXTS[0] as string, dimensions: 4, encoding_format: 'float' });
      expect(r.data[0]?.embedding).toEqual(vectorOf(SALT.backup, TEXTS[0] as string, 4));
      expect(callsTo('no-dims', m)).toHaveLength(1);
      expect(svcOf(r).attempts?.map((a) => [a.provider, a.outcome])).toEqual([
        ['no-dims', 'http_400'],
        ['backup', 'ok'],
      ]);
      expect((await books(gw, account)).available).toBe(GRANT - expectedCredits(TOKENS_PER_INPUT));
    });
  });

  describe('every target fails', () => {
    it.each([
      ['503 then a refused connection', 'svc-embed-unavailable', 503, 'upstream_unavailable'],
      ['503 then 500', 'svc-embed-broken', 502, 'upstream_error'],
    ])('%s: %s answers per docs/errors.md and the hold is voided', async (_what, alias, status, code) => {
      const { account } = await fresh();
      const res = await postEmbeddings(gw, account.secret, { model: alias, input: TEXTS });
      expect(res.status).toBe(status);
      expect(((await res.json()) as ErrorBody).error).toMatchObject({ type: 'server_error', code, param: null });
      expect(res.headers.get('x-should-retry')).toBe('true');
      await expectUntouched(account);
    });
  });

  describe('an upstream that answers 200 with a bad body', () => {
    it('too few vectors: the next target serves, one charge', async () => {
      const { account, client } = await fresh();
      const m = mark();
      const r = await client.embeddings.create({ model: 'svc-embed-short', input: TEXTS, encoding_format: 'float' });
      expect(r.data.map((d) => d.embedding)).toEqual(TEXTS.map((t) => vectorOf(SALT.backup, t, UPSTREAM_DIMS)));
      expect(callsTo('short', m)).toHaveLength(1);
      expect(svcOf(r).attempts?.map((a) => a.provider)).toEqual(['short', 'backup']);
      expect(svcOf(r).attempts?.[0]?.outcome).not.toBe('ok');
      const credits = expectedCredits(TOKENS_PER_INPUT * TEXTS.length);
      expect(await books(gw, account)).toEqual({ available: GRANT - credits, reserved: 0, pending: 0 });
    });

    it.each([
      ['too few vectors', 'svc-embed-short-only', 'short'],
      ['numbers as strings', 'svc-embed-strings-only', 'strings'],
    ])('%s from the only target: 502 upstream_error, nothing charged', async (_what, alias, scenario) => {
      const { account } = await fresh();
      const m = mark();
      const res = await postEmbeddings(gw, account.secret, { model: alias, input: TEXTS });
      expect(res.status).toBe(502);
      expect(((await res.json()) as ErrorBody).error).toMatchObject({ type: 'server_error', code: 'upstream_error' });
      expect(callsTo(scenario, m)).toHaveLength(1);
      await expectUntouched(account);
    });
  });

  describe('a Gemini target', () => {
    it("calls batchEmbedContents with the key header and outputDimensionality, and charges the gateway's estimate", async () => {
      const { account, client } = await fresh();
      const m = mark();
      const r = await client.embeddings.create({ model: 'svc-embed-gemini', input: TEXTS, dimensions: 3, encoding_format: 'float' });
      expect(r.data.map((d) => d.embedding)).toEqual(TEXTS.map((t) => vectorOf(7, t, 3)));
      const [sent] = callsTo('gemini', m);
      expect(sent?.method).toBe('POST');
      expect(sent?.path).toBe('/gemini/v1/models/text-embedding-004:batchEmbedContents');
      expect(sent?.headers['x-goog-api-key']).toBe(SECRETS.gemini);
      expect(sent?.headers.authorization).toBeUndefined();
      expect(JSON.parse(sent?.body ?? 'null')).toEqual({
        requests: TEXTS.map((text) => ({ model: 'models/text-embedding-004', content: { parts: [{ text }] }, outputDimensionality: 3 })),
      });
      const tokens = estimateOf(TEXTS);
      expect(r.usage.prompt_tokens).toBe(tokens);
      expect(r.usage.prompt_tokens).toBe(svcOf(r).tokens_metered.prompt);
      expect(svcOf(r).credits_used).toBe(expectedCredits(tokens));
      expect(await books(gw, account)).toEqual({ available: GRANT - expectedCredits(tokens), reserved: 0, pending: 0 });
    });

    it('sends no outputDimensionality when `dimensions` is not set', async () => {
      const { client } = await fresh();
      const m = mark();
      const r = await client.embeddings.create({ model: 'svc-embed-gemini', input: 'one text' });
      expect(r.data[0]?.embedding).toHaveLength(UPSTREAM_DIMS);
      const body = JSON.parse(callsTo('gemini', m)[0]?.body ?? 'null') as { requests: Record<string, unknown>[] };
      expect(body.requests[0]).not.toHaveProperty('outputDimensionality');
    });
  });

  describe('the sandbox', () => {
    it('is deterministic per text, gives unit vectors, 256 dimensions unless `dimensions` says otherwise', async () => {
      const { client } = await fresh();
      const ask = async (input: string | string[], dimensions?: number) =>
        (await client.embeddings.create({ model: 'svc-embed-sandbox', input, encoding_format: 'float', ...(dimensions ? { dimensions } : {}) })).data.map(
          (d) => d.embedding,
        );
      const [a1, b1] = await ask(TEXTS);
      const [a2] = await ask(TEXTS[0] as string);
      expect(a1).toHaveLength(256);
      expect(a2).toEqual(a1);
      expect(b1).not.toEqual(a1);
      for (const v of [a1, b1]) expect(norm(v ?? [])).toBeCloseTo(1, 9);
      const [small] = await ask(TEXTS[0] as string, 64);
      expect(small).toHaveLength(64);
      expect(norm(small ?? [])).toBeCloseTo(1, 9);
    });

    it("serves a test key even when the alias's only target is paid, which receives nothing", async () => {
      const { account, client } = await fresh({ environment: 'test', purchased: GRANT });
      const { client: live } = await fresh();
      const m = mark();
      const r = await client.embeddings.create({ model: 'svc-embed-paid', input: TEXTS, encoding_format: 'float' });
      const sandbox = await live.embeddings.create({ model: 'svc-embed-sandbox', input: TEXTS, encoding_format: 'float' });
      expect(callsTo('paid', m)).toHaveLength(0);
      expect(r.data.map((d) => d.embedding)).toEqual(sandbox.data.map((d) => d.embedding));
      expect(svcOf(r).routed_provider).toBe('sandbox');
      // The test environment's credits pay, the sandbox's own token estimate is the count.
      expect(svcOf(r).credits_used).toBe(expectedCredits(r.usage.prompt_tokens));
      expect((await books(gw, account, 'test')).available).toBe(GRANT - svcOf(r).credits_used);
    });
  });

  describe('bad input', () => {
    it.each([
      ['an empty string', { input: '' }, 'input'],
      ['an empty string in the list', { input: ['ok', ''] }, 'input[1]'],
      // docs/api.md: "a list of at most 2,048 non-empty strings"; an empty list must not reach an upstream.
      ['an empty list', { input: [] }, 'input'],
      ['more than 2048 inputs', { input: Array.from({ length: 2049 }, (_, i) => `text ${i}`) }, 'input'],
      ['token ids', { input: [1, 2, 3] }, 'input'],
      ['a list of token ids', { input: [[1, 2]] }, 'input[0]'],
      ['an unknown field', { input: 'ok', temperature: 0.2 }, 'temperature'],
      ["encoding_format 'int8'", { input: 'ok', encoding_format: 'int8' }, 'encoding_format'],
      ['no input', {}, 'input'],
    ])('%s: 400 invalid_request_error naming the param, nothing charged, no upstream call', async (_what, extra, param) => {
      const { account } = await fresh();
      const m = mark();
      const res = await postEmbeddings(gw, account.secret, { model: 'svc-embed', ...extra });
      expect(res.status).toBe(400);
      const body = (await res.json()) as ErrorBody;
      expect(body.error).toMatchObject({ type: 'invalid_request_error', param });
      expect(body.error.message.length).toBeGreaterThan(0);
      expect(callsTo('oa', m)).toHaveLength(0);
      await expectUntouched(account);
    });

    it('token ids are refused as unsupported_value', async () => {
      const { account } = await fresh();
      const res = await postEmbeddings(gw, account.secret, { model: 'svc-embed', input: [1, 2, 3] });
      expect(((await res.json()) as ErrorBody).error.code).toBe('unsupported_value');
    });
  });

  describe('credits', () => {
    it('too few credits for the hold: 402 insufficient_credits, the upstream receives nothing', async () => {
      const account = await gw.seed({ purchased: 1 });
      const m = mark();
      const input = 'A long passage about lighthouses. '.repeat(20); // ~230 estimated tokens: a hold of 30 credits
      const res = await postEmbeddings(gw, account.secret, { model: 'svc-embed', input });
      expect(res.status).toBe(402);
      expect(((await res.json()) as ErrorBody).error).toMatchObject({ type: 'insufficient_quota', code: 'insufficient_credits' });
      expect(callsTo('oa', m)).toHaveLength(0);
      expect(await books(gw, account)).toEqual({ available: 1, reserved: 0, pending: 0 });
    });
  });

  describe('the Vercel AI SDK', () => {
    it('embed and embedMany return the vectors and usage.tokens', async () => {
      const { account } = await fresh();
      const provider = createOpenAI({ baseURL: gw.url, apiKey: account.secret });
      const model = provider.embedding('svc-embed');
      const one = await embed({ model, value: TEXTS[0] as string, maxRetries: 0 });
      expect(one.embedding).toEqual(vectorOf(SALT.oa, TEXTS[0] as string, UPSTREAM_DIMS));
      expect(one.usage.tokens).toBe(TOKENS_PER_INPUT);
      const many = await embedMany({ model, values: TEXTS, maxRetries: 0 });
      expect(many.embeddings).toEqual(TEXTS.map((t) => vectorOf(SALT.oa, t, UPSTREAM_DIMS)));
      expect(many.usage.tokens).toBe(TOKENS_PER_INPUT * TEXTS.length);
      const spent = expectedCredits(TOKENS_PER_INPUT) + expectedCredits(TOKENS_PER_INPUT * TEXTS.length);
      expect((await books(gw, account)).available).toBe(GRANT - spent);
    });

    it('embedMany with dimensions through providerOptions', async () => {
      const { account } = await fresh();
      const m = mark();
      const model = createOpenAI({ baseURL: gw.url, apiKey: account.secret }).embedding('svc-embed');
      const r = await embedMany({ model, values: TEXTS, maxRetries: 0, providerOptions: { openai: { dimensions: 2 } } });
      expect(r.embeddings).toEqual(TEXTS.map((t) => vectorOf(SALT.oa, t, 2)));
      expect(bodyOf(callsTo('oa', m)[0]).dimensions).toBe(2);
    });
  });

  it('is charged once, for what the upstream counted: the call is finished, not abandoned', async () => {
    const account = await gw.seed({ purchased: 1_000_000 });
    const before = await books(gw, account);
    const m = mark();
    const abort = new AbortController();
    const posted = fetch(`${gw.url}/embeddings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'svc-embed-slow', input: TEXTS }),
      signal: abort.signal,
    });
    // Hang up once the upstream has the request, before it answers.
    while (callsTo('slow', m).length === 0) await new Promise((r) => setTimeout(r, 10));
    abort.abort();
    await expect(posted).rejects.toThrow();
    // The upstream answers 400 ms after it got the call; the hold ends right after.
    const until = Date.now() + 5_000;
    while ((await books(gw, account)).pending > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    const after = await books(gw, account);
    expect(after.pending).toBe(0);
    expect(after.reserved).toBe(0);
    expect(before.available - after.available).toBe(expectedCredits(TOKENS_PER_INPUT * TEXTS.length));
    const report = (await (await usageToday(gw, account.secret, '&model=svc-embed-slow')).json()) as UsageReport;
    expect(report.total_requests).toBe(1);
    expect(report.total_prompt_tokens).toBe(TOKENS_PER_INPUT * TEXTS.length);
  });
});

// ---- 11. PostgreSQL -------------------------------------------------------------------------------------

describe('metering on PostgreSQL', () => {
  let schema: string | null = null;
  let gw: Gateway | undefined;
  beforeAll(async () => {
    schema = await createTestSchema();
    gw = await startEmbeddingGateway(embeddingConfig(), `${POSTGRES_URL}?schema=${schema}`);
  });
  afterAll(async () => {
    await gw?.close();
    if (schema !== null) await dropTestSchema(schema);
  });

  it('charges an embeddings request once and reports it in /v1/usage', async () => {
    const g = gw as Gateway;
    const account = await g.seed({ purchased: GRANT });
    const client = new OpenAI({ baseURL: g.url, apiKey: account.secret, maxRetries: 0 });
    const r = await client.embeddings.create({ model: 'svc-embed', input: TEXTS });
    const tokens = TOKENS_PER_INPUT * TEXTS.length;
    const credits = expectedCredits(tokens);
    expect(r.data.map((d) => d.embedding)).toEqual(TEXTS.map((t) => vectorOf(SALT.oa, t, UPSTREAM_DIMS).map(Math.fround)));
    expect(svcOf(r).credits_used).toBe(credits);
    expect(await books(g, account)).toEqual({ available: GRANT - credits, reserved: 0, pending: 0 });
    const usage = (await (await usageToday(g, account.secret)).json()) as UsageReport;
    expect(usage.breakdown_by_model).toEqual({ 'svc-embed': { requests: 1, prompt_tokens: tokens, completion_tokens: 0, credits } });
  });
});

