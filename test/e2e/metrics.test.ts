/**
 * GET /metrics (src/runtime/node/prometheus-telemetry.ts, fed by src/observability/request-observation.ts,
 * src/http/middleware/observe.ts, src/observability/instrumented-ledger.ts and the reaper) on real gateways
 * whose aliases target a real OpenAI-compatible recording upstream: scraped before and after a known mix of
 * requests (3 non-streaming and 2 streaming completions, a 402 for too few credits, a 429 from a key's rpm
 * limit, a failover from a 503 target to a second one, a hold whose lease ran out), and every counter's delta
 * is exact: requests by door/alias/provider/model/status, tokens equal to the usage the upstream reported,
 * credits equal to the sum of `svc.credits_used`, holds by outcome and refusal reason, failovers, attempts
 * by outcome, rate-limit refusals; histograms count one observation per request, attempt or ledger call;
 * svc_open_streams is 1 during a stream and 0 after; the circuit-breaker gauge shows each target's state.
 * The metrics token (401 without it or with a wrong one), and /metrics on the admin listener only.
 */
import type { ServerResponse } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, type GatewayConfig } from '../../src/config/schema.js';
import { silentLogger } from '../../src/core/logger.js';
import { createApiKey } from '../../src/keys/key-service.js';
import { startSandboxServer, type SandboxServer } from '../../src/runtime/node/sandbox-server.js';
import { startGateway, type RunningGateway } from '../../src/runtime/node/server.js';
import { chat, seedAccount, sseData, startTestGateway, type Seeded, type TestGateway } from '../helpers/gateway.js';
import { deltas, expectedDeltas, parsePrometheusText, seriesKey, valueOf, type Scrape } from '../helpers/prometheus-text.js';
import { openAIChatHandler } from '../helpers/recording-upstream/openai-chat.js';
import { Recording, type ExpectedUsage } from '../helpers/recording-upstream/recording.js';
import { startFixtureServer, type FixtureServer } from '../providers/helpers/fixture-server.js';
import { until } from '../helpers/until.js';

const MODEL = 'gpt-4o-mini';
const ADMIN_TOKEN = 'metrics-test-admin-token-0123456789abcdef';
const METRICS_TOKEN = 'metrics-scrape-token-7f3a9c';

const recording = new Recording();
let upstreams: FixtureServer;

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

beforeAll(async () => {
  upstreams = await startFixtureServer({
    openai: openAIChatHandler(recording),
    down: (_req, res) => sendJson(res, 503, { error: { message: 'The server is overloaded or not ready yet.', type: 'server_error', param: null, code: null } }),
  });
});
afterAll(async () => {
  await upstreams?.close();
});

/**
 * svc-fast: the recording upstream; svc-code: a 503 target first, then the recording upstream; svc-smart: a
 * paced in-process sandbox, unless `smart` gives other providers and targets for it.
 */
function mixConfig(
  extra: Record<string, unknown> = {},
  smart: { providers: Record<string, unknown>; targets: { provider: string; model: string }[] } = {
    providers: { sandbox: { type: 'sandbox', pace: { time_to_first_token_ms: 0, tokens_per_second: 20 } } },
    targets: [{ provider: 'sandbox', model: 'sandbox-smart' }],
  },
): GatewayConfig {
  const rec = { provider: 'rec', model: MODEL };
  return parseConfig({
    server: { reaper_interval_ms: 100 },
    health: { failure_threshold: 1_000 },
    providers: {
      rec: { type: 'openai-compatible', base_url: upstreams.baseUrl('openai'), paid: false },
      down: { type: 'openai-compatible', base_url: upstreams.baseUrl('down'), paid: false },
      ...smart.providers,
    },
    aliases: {
      'svc-fast': { targets: [rec] },
      'svc-code': { targets: [{ provider: 'down', model: MODEL }, rec] },
      'svc-smart': { targets: smart.targets },
    },
    ...extra,
  });
}

async function scrapeAt(origin: string, token?: string): Promise<Scrape> {
  const res = await fetch(`${origin}/metrics`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheusText(await res.text());
}

interface Svc {
  credits_used: number;
  routed_model: string;
  tokens_metered: { prompt: number; completion: number };
  attempts?: { provider: string; outcome: string }[];
}

async function svcOfJson(res: Response): Promise<Svc> {
  expect(res.status).toBe(200);
  return ((await res.json()) as { svc: Svc }).svc;
}

async function svcOfStream(res: Response): Promise<Svc> {
  expect(res.status).toBe(200);
  const data = sseData(await res.text());
  expect(data.at(-1)).toBe('[DONE]');
  const withSvc = data
    .slice(0, -1)
    .map((d) => JSON.parse(d) as { svc?: Svc })
    .filter((c) => c.svc !== undefined);
  expect(withSvc).toHaveLength(1);
  return withSvc[0]?.svc as Svc;
}

const body = (model: string, text: string, stream = false): Record<string, unknown> => ({
  model,
  messages: [{ role: 'user', content: text }],
  max_tokens: 64,
  ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
});

describe('metrics of a known mix of requests', () => {
  let gw: TestGateway;
  let origin: string;
  let rich: Seeded;
  let poor: Seeded;
  let limitedSecret: string;
  /** The alias label the mix's 429 was counted under (null until the mix ran). */
  let rateLimitedAlias: string | null = null;

  beforeAll(async () => {
    gw = await startTestGateway({ config: mixConfig() });
    origin = new URL(gw.url).origin;
    rich = await gw.seed({ purchased: 1_000_000 });
    poor = await gw.seed({});
    limitedSecret = (await createApiKey(gw.store.keys, { accountId: rich.accountId, environment: 'live', name: 'rpm 1', dailyCreditLimit: null, rpmLimit: 1 }))
      .secret;
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('moves every counter by exactly what the mix did', async () => {
    let scrapes = 0;
    const scrape = async (): Promise<Scrape> => {
      scrapes++;
      return scrapeAt(origin);
    };
    const before = await scrape();
    const scrapesBefore = scrapes;
    const mark = recording.mark();

    // 3 non-streaming on svc-fast (one of them with the rpm-limited key), 2 streaming on svc-fast.
    const svcs: { alias: string; svc: Svc }[] = [];
    svcs.push({ alias: 'svc-fast', svc: await svcOfJson(await chat(gw, rich.secret, body('svc-fast', 'First question for Ada.'))) });
    svcs.push({ alias: 'svc-fast', svc: await svcOfJson(await chat(gw, rich.secret, body('svc-fast', 'Second question for Grace.'))) });
    svcs.push({ alias: 'svc-fast', svc: await svcOfJson(await chat(gw, limitedSecret, body('svc-fast', 'Third question for Alan.'))) });
    svcs.push({ alias: 'svc-fast', svc: await svcOfStream(await chat(gw, rich.secret, body('svc-fast', 'A streamed one for Barbara.', true))) });
    svcs.push({ alias: 'svc-fast', svc: await svcOfStream(await chat(gw, rich.secret, body('svc-fast', 'Another streamed one for Edsger.', true))) });
    // The rpm-limited key's second request of the minute: 429, nothing held.
    const limited = await chat(gw, limitedSecret, body('svc-fast', 'Over the limit.'));
    expect(limited.status).toBe(429);
    expect(((await limited.json()) as { error: { code: string } }).error.code).toBe('rate_limit_exceeded');
    // No credits cannot hold the worst case: 402 insufficient_credits, nothing called upstream.
    const refused = await chat(gw, poor.secret, body('svc-fast', 'Too poor.'));
    expect(refused.status).toBe(402);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('insufficient_credits');
    // svc-code: the first target answers 503, the second serves.
    const failover = await svcOfJson(await chat(gw, rich.secret, body('svc-code', 'Fail over for Frances.')));
    expect(failover.attempts?.map((a) => [a.provider, a.outcome])).toEqual([
      ['down', 'http_503'],
      ['rec', 'ok'],
    ]);
    svcs.push({ alias: 'svc-code', svc: failover });
    // A hold whose gateway "died": its lease runs out and the reaper voids it.
    const orphan = await gw.store.ledger.reserve({ holdId: 'hold_metrics_orphan', keyId: rich.keyId, amount: 10, leaseMs: 1 });
    expect(orphan.ok).toBe(true);

    const served = recording.since(mark, 'openai');
    expect(served).toHaveLength(6);
    const usage: ExpectedUsage[] = served.map((r) => r.reply.usage as ExpectedUsage);
    // What the gateway metered is what the upstream reported.
    expect(svcs.map((s) => s.svc.tokens_metered)).toEqual(usage.map((u) => ({ prompt: u.prompt_tokens, completion: u.completion_tokens, total: u.prompt_tokens + u.completion_tokens })));

    // Streams are counted when their hold ended; the reaper runs every 100 ms.
    const after = await until('the streams and the reaped hold to be counted', async () => {
      const s = await scrape();
      return valueOf(s, 'svc_holds_total', { outcome: 'reaped', reason: '' }) - valueOf(before, 'svc_holds_total', { outcome: 'reaped', reason: '' }) >= 1 &&
        valueOf(s, 'svc_open_streams') === 0
        ? s
        : null;
    });
    const scrapesCounted = scrapes - scrapesBefore; // every scrape but the last is in `after`

    const rec = { provider: 'rec', model: MODEL };
    const fast = svcs.filter((s) => s.alias === 'svc-fast');
    const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);
    const fastUsage = usage.slice(0, 5);
    const codeUsage = usage.slice(5);

    const requestDeltas = deltas(before, after, 'svc_requests_total');
    // The 429's alias label is checked on its own below ('a rate-limited completion ...').
    const rateLimitedSeries = Object.keys(requestDeltas).filter((k) => k.includes('status="429"'));
    expect(rateLimitedSeries).toHaveLength(1);
    expect(rateLimitedSeries[0]).toMatch(/^svc_requests_total\{alias="[^"]*",door="chat_completions",model="",provider="",status="429"\}$/);
    expect(requestDeltas[rateLimitedSeries[0] as string]).toBe(1);
    rateLimitedAlias = /alias="([^"]*)"/.exec(rateLimitedSeries[0] as string)?.[1] ?? null;
    delete requestDeltas[rateLimitedSeries[0] as string];
    expect(requestDeltas).toEqual(
      expectedDeltas('svc_requests_total', [
        [{ door: 'chat_completions', alias: 'svc-fast', ...rec, status: '200' }, 5],
        [{ door: 'chat_completions', alias: 'svc-code', ...rec, status: '200' }, 1],
        [{ door: 'chat_completions', alias: 'svc-fast', provider: '', model: '', status: '402' }, 1],
        [{ door: 'metrics', alias: '', provider: '', model: '', status: '200' }, scrapesCounted],
      ]),
    );
    expect(deltas(before, after, 'svc_tokens_total')).toEqual(
      expectedDeltas('svc_tokens_total', [
        [{ alias: 'svc-fast', ...rec, direction: 'input' }, sum(fastUsage.map((u) => u.prompt_tokens))],
        [{ alias: 'svc-fast', ...rec, direction: 'output' }, sum(fastUsage.map((u) => u.completion_tokens))],
        [{ alias: 'svc-code', ...rec, direction: 'input' }, sum(codeUsage.map((u) => u.prompt_tokens))],
        [{ alias: 'svc-code', ...rec, direction: 'output' }, sum(codeUsage.map((u) => u.completion_tokens))],
      ]),
    );
    expect(deltas(before, after, 'svc_credits_charged_total')).toEqual(
      expectedDeltas('svc_credits_charged_total', [
        [{ alias: 'svc-fast', ...rec }, sum(fast.map((s) => s.svc.credits_used))],
        [{ alias: 'svc-code', ...rec }, failover.credits_used],
      ]),
    );
    expect(sum(svcs.map((s) => s.svc.credits_used))).toBeGreaterThan(0);
    expect(deltas(before, after, 'svc_holds_total')).toEqual(
      expectedDeltas('svc_holds_total', [
        [{ outcome: 'settled', reason: '' }, 6],
        [{ outcome: 'refused', reason: 'insufficient_credits' }, 1],
        [{ outcome: 'reaped', reason: '' }, 1],
      ]),
    );
    expect(deltas(before, after, 'svc_failovers_total')).toEqual(expectedDeltas('svc_failovers_total', [[{ alias: 'svc-code', kind: 'retry' }, 1]]));
    expect(deltas(before, after, 'svc_upstream_attempts_total')).toEqual(
      expectedDeltas('svc_upstream_attempts_total', [
        [{ ...rec, outcome: 'ok' }, 6],
        [{ provider: 'down', model: MODEL, outcome: 'http_503' }, 1],
      ]),
    );
    expect(deltas(before, after, 'svc_rate_limited_total')).toEqual(expectedDeltas('svc_rate_limited_total', [[{ door: 'chat_completions' }, 1]]));
    for (const quiet of ['svc_settlements_deferred_total', 'svc_shortfalls_total', 'svc_shortfall_credits_total', 'svc_ledger_errors_total']) {
      expect(deltas(before, after, quiet), quiet).toEqual({});
    }

    // Histograms: one observation per request, attempt, first token and ledger call.
    // 5 served and the 402 on svc-fast, the failover on svc-code, the scrapes; the 429 under its alias label.
    const durations = deltas(before, after, 'svc_request_duration_seconds_count');
    const rateLimitedDuration = seriesKey('svc_request_duration_seconds_count', { door: 'chat_completions', alias: rateLimitedAlias ?? '' });
    durations[rateLimitedDuration] = (durations[rateLimitedDuration] ?? 0) - 1;
    if (durations[rateLimitedDuration] === 0) delete durations[rateLimitedDuration];
    expect(durations).toEqual(
      expectedDeltas('svc_request_duration_seconds_count', [
        [{ door: 'chat_completions', alias: 'svc-fast' }, 6],
        [{ door: 'chat_completions', alias: 'svc-code' }, 1],
        [{ door: 'metrics', alias: '' }, scrapesCounted],
      ]),
    );
    expect(deltas(before, after, 'svc_gateway_overhead_seconds_count')).toEqual(
      expectedDeltas('svc_gateway_overhead_seconds_count', [
        [{ door: 'chat_completions' }, 8],
        [{ door: 'metrics' }, scrapesCounted],
      ]),
    );
    expect(deltas(before, after, 'svc_upstream_attempt_duration_seconds_count')).toEqual(
      expectedDeltas('svc_upstream_attempt_duration_seconds_count', [
        [rec, 6],
        [{ provider: 'down', model: MODEL }, 1],
      ]),
    );
    expect(deltas(before, after, 'svc_time_to_first_token_seconds_count')).toEqual(
      expectedDeltas('svc_time_to_first_token_seconds_count', [
        [{ alias: 'svc-fast' }, 5],
        [{ alias: 'svc-code' }, 1],
      ]),
    );
    // reserve: 6 granted + 1 refused; settle: 6 (the reaper uses the store directly, not the metered ledger).
    expect(deltas(before, after, 'svc_ledger_operation_duration_seconds_count')).toEqual(
      expectedDeltas('svc_ledger_operation_duration_seconds_count', [
        [{ operation: 'reserve' }, 7],
        [{ operation: 'settle' }, 6],
      ]),
    );
    // A histogram's +Inf bucket equals its count; sums grow.
    expect(valueOf(after, 'svc_request_duration_seconds_bucket', { door: 'chat_completions', alias: 'svc-fast', le: '+Inf' })).toBe(
      valueOf(after, 'svc_request_duration_seconds_count', { door: 'chat_completions', alias: 'svc-fast' }),
    );
    expect(valueOf(after, 'svc_request_duration_seconds_sum', { door: 'chat_completions', alias: 'svc-fast' })).toBeGreaterThan(0);

    expect(valueOf(after, 'svc_open_streams')).toBe(0);
    expect(after.values.has('svc_open_streams')).toBe(true);
    // Breakers: both targets closed (threshold 1,000), the sandbox target too.
    expect(after.values.get('svc_circuit_breaker_state{model="gpt-4o-mini",provider="rec"}')).toBe(0);
    expect(after.values.get('svc_circuit_breaker_state{model="gpt-4o-mini",provider="down"}')).toBe(0);
    expect(after.values.get('svc_circuit_breaker_state{model="sandbox-smart",provider="sandbox"}')).toBe(0);
    // Node's own metrics.
    expect(after.types.get('nodejs_eventloop_lag_seconds')).toBe('gauge');
    expect(after.values.has('nodejs_eventloop_lag_seconds')).toBe(true);
    expect(after.types.get('svc_requests_total')).toBe('counter');
    expect(after.types.get('svc_request_duration_seconds')).toBe('histogram');
  });

  // Bug: src/http/completion-door.ts:105 refuses a rate-limited request (admitRate) before the observation
  // learns its alias (RequestObservation.reserve/attach, reached only at Completion.open), so the 429 is
  // counted under alias="" although the request named svc-fast (src/observability/telemetry.ts RequestMetrics.alias:
  // "'' when the request named none"). Fix: set the observation's alias right after resolveRoute (line 99).
  it('a rate-limited completion is counted under the alias it asked for', () => {
    expect(rateLimitedAlias).toBe('svc-fast');
  });

  it('svc_open_streams is 1 while a stream is relayed and 0 once it ended', async () => {
    const res = await chat(gw, rich.secret, { model: 'svc-smart', messages: [{ role: 'user', content: 'Tell a long story about a lighthouse.' }], max_tokens: 40, stream: true });
    expect(res.status).toBe(200);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    expect(first.done).toBe(false);
    expect(valueOf(await scrapeAt(origin), 'svc_open_streams')).toBe(1);
    while (!(await reader.read()).done) {
      /* drain */
    }
    await until('the stream to close', async () => ((valueOf(await scrapeAt(origin), 'svc_open_streams') === 0) ? true : null));
  });

  it('a client that hangs up mid-stream does not leave svc_open_streams up; its hold is still settled', async () => {
    const before = await scrapeAt(origin);
    const abort = new AbortController();
    const res = await chat(
      gw,
      rich.secret,
      { model: 'svc-smart', messages: [{ role: 'user', content: 'Tell a long story about a lighthouse.' }], max_tokens: 40, stream: true },
      { signal: abort.signal },
    );
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    expect((await reader.read()).done).toBe(false);
    expect(valueOf(await scrapeAt(origin), 'svc_open_streams')).toBe(1);
    abort.abort();
    const after = await until('the abandoned stream to be counted', async () => {
      const s = await scrapeAt(origin);
      return valueOf(s, 'svc_open_streams') === 0 && Object.keys(deltas(before, s, 'svc_holds_total')).length > 0 ? s : null;
    });
    expect(deltas(before, after, 'svc_holds_total')).toEqual(expectedDeltas('svc_holds_total', [[{ outcome: 'settled', reason: '' }, 1]]));
    expect(deltas(before, after, 'svc_upstream_attempts_total')).toEqual(
      expectedDeltas('svc_upstream_attempts_total', [[{ provider: 'sandbox', model: 'sandbox-smart', outcome: 'aborted' }, 1]]),
    );
    const requestsDelta = deltas(before, after, 'svc_requests_total');
    expect(requestsDelta[seriesKey('svc_requests_total', { door: 'chat_completions', alias: 'svc-smart', provider: 'sandbox', model: 'sandbox-smart', status: '200' })]).toBe(1);
  });

  it('labels carry no key, account or request id', async () => {
    const text = await (await fetch(`${origin}/metrics`)).text();
    expect(text).not.toContain(rich.keyId);
    expect(text).not.toContain(rich.accountId);
    expect(text).not.toMatch(/req_[A-Za-z0-9]/);
    expect(text).not.toContain(rich.secret);
  });
});

describe('the metrics token, breakers, continuations', () => {
  let gw: RunningGateway;
  let dir: string;
  let origin: string;
  let primary: SandboxServer;
  let secondary: SandboxServer;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-metrics-'));
    const instant = { timeToFirstTokenMs: 0, tokensPerSecond: 0 };
    primary = await startSandboxServer({ port: 0, pace: instant });
    secondary = await startSandboxServer({ port: 0, pace: instant });
    gw = await startGateway({
      config: mixConfig(
        { health: { failure_threshold: 1 } },
        {
          providers: {
            primary: { type: 'openai-compatible', base_url: primary.url, paid: false },
            secondary: { type: 'openai-compatible', base_url: secondary.url, paid: false },
          },
          targets: [
            { provider: 'primary', model: 'm' },
            { provider: 'secondary', model: 'm' },
          ],
        },
      ),
      secrets: {},
      databaseUrl: `sqlite:${join(dir, 'gateway.db')}`,
      port: 0,
      logger: silentLogger,
      metricsToken: METRICS_TOKEN,
    });
    origin = new URL(gw.url).origin;
  });
  afterAll(async () => {
    await gw?.close();
    await primary?.close();
    await secondary?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('answers 401 without the token or with a wrong one, 200 with it', async () => {
    const none = await fetch(`${origin}/metrics`);
    expect(none.status).toBe(401);
    expect(((await none.json()) as { error: { code: string } }).error.code).toBe('invalid_api_key');
    const wrong = await fetch(`${origin}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}x` } });
    expect(wrong.status).toBe(401);
    const basic = await fetch(`${origin}/metrics`, { headers: { authorization: `Basic ${METRICS_TOKEN}` } });
    expect(basic.status).toBe(401);
    const right = await scrapeAt(origin, METRICS_TOKEN);
    expect(right.values.has('svc_open_streams')).toBe(true);
    // The refused scrapes were counted as requests of the metrics door.
    expect(valueOf(right, 'svc_requests_total', { door: 'metrics', alias: '', provider: '', model: '', status: '401' })).toBe(3);
  });

  it('the circuit-breaker gauge shows an open breaker as 2', async () => {
    const seeded = await seedAccount(gw.store, { purchased: 1_000_000 });
    await svcOfJson(await chat(gw, seeded.secret, body('svc-code', 'Trip the breaker for Katherine.')));
    const s = await scrapeAt(origin, METRICS_TOKEN);
    expect(valueOf(s, 'svc_circuit_breaker_state', { provider: 'down', model: MODEL })).toBe(2);
    expect(valueOf(s, 'svc_circuit_breaker_state', { provider: 'rec', model: MODEL })).toBe(0);
  });

  it('a stream cut mid-way and continued on the next target counts a continuation, not a retry', async () => {
    const seeded = await seedAccount(gw.store, { purchased: 1_000_000 });
    const before = await scrapeAt(origin, METRICS_TOKEN);
    primary.setFault({ type: 'cut_after_tokens', tokens: 6 });
    const svc = await svcOfStream(
      await chat(gw, seeded.secret, { model: 'svc-smart', messages: [{ role: 'user', content: 'Tell me about the tides at Saint-Malo.' }], max_tokens: 60, stream: true }),
    );
    primary.setFault(null);
    expect(svc.attempts?.map((a) => [a.provider, a.outcome, (a as { continuation?: boolean }).continuation ?? false])).toEqual([
      ['primary', 'protocol', false],
      ['secondary', 'ok', true],
    ]);
    const after = await until('the stream to be counted', async () => {
      const s = await scrapeAt(origin, METRICS_TOKEN);
      return valueOf(s, 'svc_open_streams') === 0 && valueOf(s, 'svc_holds_total', { outcome: 'settled', reason: '' }) > valueOf(before, 'svc_holds_total', { outcome: 'settled', reason: '' }) ? s : null;
    });
    expect(deltas(before, after, 'svc_failovers_total')).toEqual(expectedDeltas('svc_failovers_total', [[{ alias: 'svc-smart', kind: 'continuation' }, 1]]));
    expect(deltas(before, after, 'svc_upstream_attempts_total')).toEqual(
      expectedDeltas('svc_upstream_attempts_total', [
        [{ provider: 'primary', model: 'm', outcome: 'protocol' }, 1],
        [{ provider: 'secondary', model: 'm', outcome: 'ok' }, 1],
      ]),
    );
    expect(deltas(before, after, 'svc_credits_charged_total')).toEqual(
      expectedDeltas('svc_credits_charged_total', [[{ alias: 'svc-smart', provider: 'secondary', model: 'm' }, svc.credits_used]]),
    );
    // The cut opened the primary's breaker (threshold 1).
    expect(valueOf(after, 'svc_circuit_breaker_state', { provider: 'primary', model: 'm' })).toBe(2);
  });
});

describe('with an admin listener', () => {
  let gw: TestGateway;

  beforeAll(async () => {
    gw = await startTestGateway({ config: mixConfig(), adminToken: ADMIN_TOKEN, adminListener: { host: '127.0.0.1', port: 0 } });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('serves /metrics on the admin port and answers 404 for it on the public one', async () => {
    expect(gw.adminUrl).toBeDefined();
    const adminOrigin = new URL(gw.adminUrl as string).origin;
    const publicOrigin = new URL(gw.url).origin;
    expect(adminOrigin).not.toBe(publicOrigin);
    const onPublic = await fetch(`${publicOrigin}/metrics`);
    expect(onPublic.status).toBe(404);
    const text = await onPublic.text();
    expect(text).not.toContain('svc_requests_total');
    const onAdmin = await scrapeAt(adminOrigin);
    // The public 404 was counted, by the public listener's app, in the same registry.
    expect(valueOf(onAdmin, 'svc_requests_total', { door: 'metrics', alias: '', provider: '', model: '', status: '404' })).toBe(1);
  });
});
