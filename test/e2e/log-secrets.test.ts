/**
 * The logs (src/runtime/node/pino-logger.ts, the access line of src/http/middleware/observe.ts) of a real
 * gateway at debug level, captured line by line through pino's destination: a run that creates keys (admin
 * API, then /v1/api-keys with one of them), makes completions with a good key, a revoked key, malformed keys,
 * a wrong secret for a real key id, a stream, an upstream that refuses with a 401 echoing the provider key it
 * was sent, a wrong admin token, probes and scrapes, with configured upstream provider secrets, a metrics
 * token, and prompts carrying a unique marker.
 *
 * Proven: every line is one JSON object with level, time and msg; exactly one access line (`msg: request`)
 * per HTTP request, matched by request id, with requestId, door, status, latencyMs, keyId/accountId when a
 * key was recognised, and alias, routedModel, tokens, credits, attempts and ending for a completion; probes
 * and scrapes at debug, the rest at info; and no line holds a key secret the run created or presented, the
 * admin or metrics token, an upstream provider secret or the prompt marker.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import CRC32 from 'crc-32';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/schema.js';
import { base62Fixed } from '../../src/keys/encoding.js';
import { pinoLogger } from '../../src/runtime/node/pino-logger.js';
import { startGateway, type RunningGateway } from '../../src/runtime/node/server.js';
import { sseData } from '../helpers/gateway.js';
import { openAIChatHandler } from '../helpers/recording-upstream/openai-chat.js';
import { Recording } from '../helpers/recording-upstream/recording.js';
import { startFixtureServer, type FixtureServer } from '../providers/helpers/fixture-server.js';

const MODEL = 'gpt-4o-mini';
const ADMIN_TOKEN = 'log-secrets-ADMIN-token-5b1e0c7d9a2f4e6b8c0d';
const METRICS_TOKEN = 'log-secrets-METRICS-token-3e9f';
const PROVIDER_SECRETS = { openai: 'sk-upstream-SECRET-openai-8d7c6b5a4f3e', refuser: 'sk-upstream-SECRET-refuser-1a2b3c4d5e6f' };
const PROMPT_MARKER = 'Quetzalcoatl-log-marker-61825';

/** Captures pino's lines, as a pino DestinationStream (anything with `write(string)`). */
class LineSink {
  readonly lines: string[] = [];
  private partial = '';
  write(chunk: string): void {
    const text = this.partial + chunk;
    const parts = text.split('\n');
    this.partial = parts.pop() ?? '';
    this.lines.push(...parts.filter((l) => l !== ''));
  }
}

interface LogLine {
  level: string;
  time: string;
  msg: string;
  [field: string]: unknown;
}

/** OpenAI's 401 for a wrong key, but echoing the whole key it was sent (worse than OpenAI, which masks it). */
function refuser(req: IncomingMessage, res: ServerResponse): void {
  const sent = (req.headers.authorization ?? '').replace(/^Bearer /, '');
  res.writeHead(401, { 'content-type': 'application/json' }).end(
    JSON.stringify({
      error: { message: `Incorrect API key provided: ${sent}. You can find your API key at https://platform.openai.com/account/api-keys.`, type: 'invalid_request_error', param: null, code: 'invalid_api_key' },
    }),
  );
}

/** A secret of the right shape and checksum for `keyId`'s id, with another secret part: a guess at the key. */
function forgedSecretFor(keyId: string): string {
  const head = `svc_live_${keyId.slice('key_'.length)}${'Z'.repeat(22)}`;
  return head + base62Fixed(CRC32.str(head), 6);
}

const recording = new Recording();
let upstreams: FixtureServer;
let gw: RunningGateway;
let dir: string;
const sink = new LineSink();
/** Every secret the run created or presented, and what else must never be logged. */
const secrets: { what: string; value: string }[] = [];
/** x-request-id of every HTTP request the test made, with what it was. */
const requests: { id: string; what: string; status: number }[] = [];

let publicOrigin: string;

async function call(what: string, path: string, init: RequestInit & { bearer?: string; json?: unknown } = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (init.bearer !== undefined) headers.set('authorization', `Bearer ${init.bearer}`);
  if (init.json !== undefined) headers.set('content-type', 'application/json');
  const res = await fetch(`${publicOrigin}${path}`, {
    ...init,
    headers,
    ...(init.json !== undefined ? { body: JSON.stringify(init.json), method: init.method ?? 'POST' } : {}),
  });
  const id = res.headers.get('x-request-id');
  expect(id, `${what}: x-request-id`).toBeTruthy();
  requests.push({ id: id as string, what, status: res.status });
  return res;
}

const completionBody = (model: string, text: string, stream = false): Record<string, unknown> => ({
  model,
  messages: [{ role: 'user', content: `${text} ${PROMPT_MARKER}` }],
  max_tokens: 32,
  ...(stream ? { stream: true } : {}),
});

beforeAll(async () => {
  upstreams = await startFixtureServer({ openai: openAIChatHandler(recording), refuser });
  dir = await mkdtemp(join(tmpdir(), 'svc-logs-'));
  gw = await startGateway({
    config: parseConfig({
      health: { failure_threshold: 1_000 },
      providers: {
        openai: { type: 'openai-compatible', base_url: upstreams.baseUrl('openai'), paid: false },
        refuser: { type: 'openai-compatible', base_url: upstreams.baseUrl('refuser'), paid: false },
      },
      aliases: {
        'svc-fast': { targets: [{ provider: 'openai', model: MODEL }] },
        'svc-code': { targets: [{ provider: 'refuser', model: MODEL }] },
        'svc-smart': { targets: [{ provider: 'openai', model: MODEL }] },
      },
    }),
    secrets: PROVIDER_SECRETS,
    databaseUrl: `sqlite:${join(dir, 'gateway.db')}`,
    port: 0,
    logger: pinoLogger({ level: 'debug', destination: sink }),
    adminToken: ADMIN_TOKEN,
    metricsToken: METRICS_TOKEN,
  });
  publicOrigin = new URL(gw.url).origin;
  secrets.push(
    { what: 'admin token', value: ADMIN_TOKEN },
    { what: 'metrics token', value: METRICS_TOKEN },
    { what: 'openai provider secret', value: PROVIDER_SECRETS.openai },
    { what: 'refuser provider secret', value: PROVIDER_SECRETS.refuser },
    { what: 'prompt marker', value: PROMPT_MARKER },
  );

  // Keys: an account, credits and a key through the admin API; a child key through /v1/api-keys.
  const account = (await (await call('admin: create account', '/admin/v1/accounts', { bearer: ADMIN_TOKEN, json: { name: 'logs' } })).json()) as { id: string };
  expect(
    (await call('admin: grant', `/admin/v1/accounts/${account.id}/credits`, { bearer: ADMIN_TOKEN, json: { kind: 'purchased', amount: 1_000_000 } })).status,
  ).toBe(201);
  const adminKeyRes = await call('admin: create key', `/admin/v1/accounts/${account.id}/keys`, { bearer: ADMIN_TOKEN, json: { name: 'operator-made' } });
  expect(adminKeyRes.status).toBe(201);
  const adminKey = (await adminKeyRes.json()) as { id: string; secret: string };
  secrets.push({ what: 'admin-created key', value: adminKey.secret });
  const childRes = await call('api: create key', '/v1/api-keys', { bearer: adminKey.secret, json: { name: 'child' } });
  expect(childRes.status).toBe(201);
  const child = (await childRes.json()) as { id: string; secret: string };
  secrets.push({ what: 'api-created key', value: child.secret });
  const doomedRes = await call('api: create key to revoke', '/v1/api-keys', { bearer: adminKey.secret, json: { name: 'doomed' } });
  const doomed = (await doomedRes.json()) as { id: string; secret: string };
  secrets.push({ what: 'revoked key', value: doomed.secret });
  expect((await call('api: list keys', '/v1/api-keys', { bearer: child.secret })).status).toBe(200);
  expect((await call('api: revoke key', `/v1/api-keys/${doomed.id}`, { bearer: adminKey.secret, method: 'DELETE' })).status).toBe(200);

  // Completions.
  const good = await call('completion: good key', '/v1/chat/completions', { bearer: child.secret, json: completionBody('svc-fast', 'Hello from Ada.') });
  expect(good.status).toBe(200);
  await good.json();
  const streamed = await call('completion: stream', '/v1/chat/completions', { bearer: adminKey.secret, json: completionBody('svc-smart', 'Stream for Grace.', true) });
  expect(streamed.status).toBe(200);
  expect(sseData(await streamed.text()).at(-1)).toBe('[DONE]');
  const revoked = await call('completion: revoked key', '/v1/chat/completions', { bearer: doomed.secret, json: completionBody('svc-fast', 'Revoked.') });
  expect(revoked.status).toBe(401);
  const malformed = 'svc_live_thisIsNotAValidKeyAtAll0123456789abcdefgh';
  secrets.push({ what: 'malformed key', value: malformed });
  expect((await call('completion: malformed key', '/v1/chat/completions', { bearer: malformed, json: completionBody('svc-fast', 'Malformed.') })).status).toBe(401);
  const foreign = 'sk-proj-FOREIGN-secret-not-ours-42';
  secrets.push({ what: 'foreign key', value: foreign });
  expect((await call('completion: foreign key', '/v1/chat/completions', { bearer: foreign, json: completionBody('svc-fast', 'Foreign.') })).status).toBe(401);
  const forged = forgedSecretFor(child.id);
  secrets.push({ what: 'wrong secret for a real key id', value: forged });
  expect((await call('completion: wrong secret', '/v1/chat/completions', { bearer: forged, json: completionBody('svc-fast', 'Forged.') })).status).toBe(401);
  const refused = await call('completion: upstream 401', '/v1/chat/completions', { bearer: child.secret, json: completionBody('svc-code', 'Refused upstream.') });
  expect(refused.status).toBeGreaterThanOrEqual(400);
  await refused.text();

  // Operator mistakes, probes, scrapes.
  expect((await call('admin: wrong token', '/admin/v1/accounts', { bearer: `${ADMIN_TOKEN}-wrong`, json: {} })).status).toBe(401);
  expect((await call('probe: healthz', '/healthz')).status).toBe(200);
  expect((await call('probe: readyz', '/readyz')).status).toBe(200);
  expect((await call('metrics: no token', '/metrics')).status).toBe(401);
  expect((await call('metrics: with token', '/metrics', { bearer: METRICS_TOKEN })).status).toBe(200);

  // The stream's access line is written when its hold ended.
  const deadline = performance.now() + 5_000;
  while (accessLines().length < requests.length && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
});
afterAll(async () => {
  await gw?.close();
  await upstreams?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function parsed(): LogLine[] {
  return sink.lines.map((l) => JSON.parse(l) as LogLine);
}

function accessLines(): LogLine[] {
  return sink.lines
    .map((l) => {
      try {
        return JSON.parse(l) as LogLine;
      } catch {
        return null;
      }
    })
    .filter((l): l is LogLine => l !== null && l.msg === 'request');
}

describe('logs at debug level', () => {
  it('writes only JSON lines with level, time and msg', () => {
    expect(sink.lines.length).toBeGreaterThan(0);
    for (const line of sink.lines) {
      let value: unknown;
      expect(() => (value = JSON.parse(line)), line).not.toThrow();
      expect(value).toMatchObject({ level: expect.stringMatching(/^(debug|info|warn|error)$/), time: expect.any(String), msg: expect.any(String) });
      expect(Number.isNaN(Date.parse((value as LogLine).time))).toBe(false);
    }
  });

  it('writes one access line per request, matched by request id', () => {
    const lines = accessLines();
    expect(lines.map((l) => l.requestId).sort()).toEqual(requests.map((r) => r.id).sort());
    for (const r of requests) {
      const line = lines.find((l) => l.requestId === r.id) as LogLine;
      expect(line, r.what).toMatchObject({ status: r.status, door: expect.any(String), latencyMs: expect.any(Number) });
    }
  });

  it('access lines carry the fields of their request: key and account ids, alias, routed model, tokens, credits, attempts, ending', () => {
    const lines = accessLines();
    const byWhat = (what: string): LogLine => lines.find((l) => l.requestId === requests.find((r) => r.what === what)?.id) as LogLine;
    for (const what of ['completion: good key', 'completion: stream']) {
      const line = byWhat(what);
      expect(line, what).toMatchObject({
        level: 'info',
        door: 'chat_completions',
        status: 200,
        keyId: expect.stringMatching(/^key_/),
        accountId: expect.stringMatching(/^acct_/),
        alias: what === 'completion: stream' ? 'svc-smart' : 'svc-fast',
        routedModel: `openai/${MODEL}`,
        promptTokens: expect.any(Number),
        completionTokens: expect.any(Number),
        credits: expect.any(Number),
        attempts: 1,
        ending: 'completed',
      });
      expect(line.completionTokens as number).toBeGreaterThan(0);
      expect(line.credits as number).toBeGreaterThan(0);
    }
    expect(byWhat('completion: upstream 401')).toMatchObject({ door: 'chat_completions', alias: 'svc-code', routedModel: `refuser/${MODEL}`, credits: 0, attempts: 1 });
    // Refused before a key was recognised: no key or account id.
    for (const what of ['completion: malformed key', 'completion: foreign key', 'completion: wrong secret', 'completion: revoked key']) {
      const line = byWhat(what);
      expect(line, what).toMatchObject({ status: 401, door: 'chat_completions', level: 'info' });
      expect(line, what).not.toHaveProperty('credits');
    }
    expect(byWhat('api: create key')).toMatchObject({ door: 'api_keys', status: 201, keyId: expect.stringMatching(/^key_/) });
    expect(byWhat('admin: create key')).toMatchObject({ door: 'admin', status: 201 });
    for (const what of ['probe: healthz', 'probe: readyz']) expect(byWhat(what)).toMatchObject({ door: 'probe', level: 'debug' });
    for (const what of ['metrics: no token', 'metrics: with token']) expect(byWhat(what)).toMatchObject({ door: 'metrics', level: 'debug' });
    expect(byWhat('admin: wrong token')).toMatchObject({ door: 'admin', status: 401, level: 'info' });
  });

  it('logs the operator-token failure at warn, without the token', () => {
    const warn = parsed().find((l) => l.msg === 'admin API: invalid operator token');
    expect(warn).toMatchObject({ level: 'warn', path: '/admin/v1/accounts' });
  });

  it('never logs a key secret, a token, a provider secret or the prompt', () => {
    // Sanity: the run did present each of them to the gateway, and the upstream did echo the refuser's key.
    expect(secrets.length).toBeGreaterThanOrEqual(11);
    expect(upstreams.requests.some((r) => r.headers.authorization === `Bearer ${PROVIDER_SECRETS.refuser}`)).toBe(true);
    expect(recording.all.some((r) => JSON.stringify(r.body).includes(PROMPT_MARKER))).toBe(true);
    const leaks: string[] = [];
    for (const line of sink.lines) {
      for (const s of secrets) {
        if (line.includes(s.value)) leaks.push(`${s.what} in: ${line}`);
        // The random part of a key secret alone (after svc_live_ and the 12-character id).
        if (s.value.startsWith('svc_live_') && s.value.length === 49 && line.includes(s.value.slice(21, 43))) leaks.push(`${s.what} (secret part) in: ${line}`);
      }
    }
    expect(leaks).toEqual([]);
  });
});
