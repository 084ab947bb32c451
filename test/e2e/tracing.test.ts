/**
 * OpenTelemetry traces (src/runtime/node/tracing.ts, src/http/middleware/observe.ts,
 * src/observability/request-observation.ts) exported over OTLP/HTTP to a real receiver started here
 * (node:http, POST /v1/traces, JSON ExportTraceServiceRequest), from a real gateway whose aliases target a
 * real OpenAI-compatible recording upstream (and a 503 target for failover).
 *
 * Proven: one trace per request; a SERVER root span with `svc.authenticate`, `svc.reserve`, one CLIENT span
 * `chat <model>` per upstream attempt and `svc.settle` as its children; GenAI attributes on the attempts
 * (gen_ai.operation.name, gen_ai.provider.name, gen_ai.request.model, gen_ai.request.max_tokens,
 * gen_ai.response.model) and svc.attempt.outcome; usage, credits, routed model and key id (never the secret)
 * on the root; a failover's attempts as two CLIENT spans with their outcomes; a client's `traceparent`
 * continued; the upstream receives a `traceparent` naming the request's trace and the attempt's span; no
 * prompt text anywhere in the export unless recordContent is on (then in gen_ai.input.messages).
 *
 * The tracer provider is global: each describe starts tracing, runs its requests, closes its gateway (which
 * shuts tracing down, flushing the batch and unregistering the globals) and then asserts on what arrived.
 */
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/schema.js';
import { silentLogger } from '../../src/core/logger.js';
import { startGateway, type RunningGateway } from '../../src/runtime/node/server.js';
import { startTracing } from '../../src/runtime/node/tracing.js';
import { chat, seedAccount, sseData, type Seeded } from '../helpers/gateway.js';
import { openAIChatHandler } from '../helpers/recording-upstream/openai-chat.js';
import { Recording, type ExpectedUsage, type Recorded } from '../helpers/recording-upstream/recording.js';
import { startFixtureServer, type FixtureServer, type RecordedRequest } from '../providers/helpers/fixture-server.js';

const MODEL = 'gpt-4o-mini';
/** What the recording upstream answers as the model (gen_ai.response.model). */
const RESPONSE_MODEL = 'gpt-4o-mini-2024-07-18';
const SERVER = 2;
const CLIENT = 3;
const INTERNAL = 1;
const STATUS_ERROR = 2;

// ---- the OTLP/HTTP receiver ----------------------------------------------------------------------------

interface OtlpValue {
  stringValue?: string;
  intValue?: number | string;
  boolValue?: boolean;
  doubleValue?: number;
  arrayValue?: { values?: OtlpValue[] };
}

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: { key: string; value: OtlpValue }[];
  status?: { code?: number; message?: string };
}

interface ExportTraceServiceRequest {
  resourceSpans?: { resource?: { attributes?: { key: string; value: OtlpValue }[] }; scopeSpans?: { scope?: { name?: string }; spans?: OtlpSpan[] }[] }[];
}

interface Receiver {
  url: string;
  /** Raw bodies as received (decompressed), for text searches. */
  bodies: string[];
  contentTypes: string[];
  spans(): Span[];
  close(): Promise<void>;
}

/** A span with its attributes decoded. */
interface Span {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attrs: Record<string, string | number | boolean>;
  statusCode: number;
  service: string;
}

function decode(v: OtlpValue): string | number | boolean {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.doubleValue !== undefined) return v.doubleValue;
  return JSON.stringify(v);
}

async function startReceiver(): Promise<Receiver> {
  const bodies: string[] = [];
  const contentTypes: string[] = [];
  const server: Server = createServer((req, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      let raw = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') raw = gunzipSync(raw);
      contentTypes.push(req.headers['content-type'] ?? '');
      bodies.push(raw.toString('utf8'));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    bodies,
    contentTypes,
    spans() {
      const out: Span[] = [];
      for (const body of bodies) {
        const req = JSON.parse(body) as ExportTraceServiceRequest;
        for (const rs of req.resourceSpans ?? []) {
          const service = rs.resource?.attributes?.find((a) => a.key === 'service.name')?.value.stringValue ?? '';
          for (const ss of rs.scopeSpans ?? []) {
            for (const s of ss.spans ?? []) {
              out.push({
                traceId: s.traceId,
                spanId: s.spanId,
                parentSpanId: s.parentSpanId ?? '',
                name: s.name,
                kind: s.kind,
                attrs: Object.fromEntries((s.attributes ?? []).map((a) => [a.key, decode(a.value)])),
                statusCode: s.status?.code ?? 0,
                service,
              });
            }
          }
        }
      }
      return out;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

// ---- upstreams and gateway ----------------------------------------------------------------------------

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

const recording = new Recording();
let upstreams: FixtureServer;
let receiver: Receiver;
const savedEndpoint = process.env.OTEL_EXPORTER_OTLP_ENDPOINT;

beforeAll(async () => {
  upstreams = await startFixtureServer({
    openai: openAIChatHandler(recording),
    down: (_req, res) => sendJson(res, 503, { error: { message: 'The server is overloaded or not ready yet.', type: 'server_error', param: null, code: null } }),
  });
  receiver = await startReceiver();
  // The exporter reads the standard variable itself (and appends /v1/traces).
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
});
afterAll(async () => {
  if (savedEndpoint === undefined) delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  else process.env.OTEL_EXPORTER_OTLP_ENDPOINT = savedEndpoint;
  await upstreams?.close();
  await receiver?.close();
});

async function startTracedGateway(recordContent: boolean): Promise<{ gw: RunningGateway; dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-tracing-'));
  const rec = { provider: 'rec', model: MODEL };
  const gw = await startGateway({
    config: parseConfig({
      health: { failure_threshold: 1_000 },
      providers: {
        rec: { type: 'openai-compatible', base_url: upstreams.baseUrl('openai'), paid: false },
        down: { type: 'openai-compatible', base_url: upstreams.baseUrl('down'), paid: false },
        // The same upstream asked without streaming (the adapter's complete(), not stream()).
        'rec-oneshot': { type: 'openai-compatible', base_url: upstreams.baseUrl('openai'), paid: false, upstream_streaming: false },
      },
      aliases: {
        'svc-fast': { targets: [rec] },
        'svc-code': { targets: [{ provider: 'down', model: MODEL }, rec] },
        'svc-smart': { targets: [{ provider: 'rec-oneshot', model: MODEL }] },
      },
    }),
    secrets: {},
    databaseUrl: `sqlite:${join(dir, 'gateway.db')}`,
    port: 0,
    logger: silentLogger,
    tracing: await startTracing({ recordContent, serviceName: 'svc-gateway-test' }),
  });
  return { gw, dir };
}

interface Svc {
  credits_used: number;
  tokens_metered: { prompt: number; completion: number };
}

interface Outcome {
  requestId: string;
  svc: Svc;
  /** What the recording upstream got and answered (the serving attempt). */
  served: Recorded;
  /** Every upstream request of this completion, in order (the fixture server's record, failing ones too). */
  upstreamRequests: RecordedRequest[];
}

async function complete(gw: RunningGateway, secret: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Outcome> {
  const mark = recording.mark();
  const upstreamMark = upstreams.requests.length;
  const res = await chat(gw, secret, body, { headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', ...headers } });
  expect(res.status).toBe(200);
  const requestId = res.headers.get('x-request-id') as string;
  let svc: Svc;
  if (body.stream === true) {
    const data = sseData(await res.text());
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d) as { svc?: Svc });
    svc = chunks.find((c) => c.svc !== undefined)?.svc as Svc;
  } else {
    svc = ((await res.json()) as { svc: Svc }).svc;
  }
  const served = recording.since(mark, 'openai');
  expect(served).toHaveLength(1);
  return { requestId, svc, served: served[0] as Recorded, upstreamRequests: upstreams.requests.slice(upstreamMark) };
}

const PROMPT_MARKER = 'Zanzibar-prompt-marker-4417';
const CLIENT_TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_PARENT_ID = '00f067aa0ba902b7';

function message(text: string): Record<string, unknown>[] {
  return [{ role: 'user', content: text }];
}

function traceparentOf(headers: IncomingHttpHeaders): { traceId: string; parentId: string } | null {
  const tp = headers.traceparent;
  if (typeof tp !== 'string') return null;
  const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/.exec(tp);
  return m ? { traceId: m[1] as string, parentId: m[2] as string } : null;
}

// ---- tracing without content ---------------------------------------------------------------------------

describe('traces of completions (recordContent off)', () => {
  let seeded: Seeded;
  let plain: Outcome;
  let streamed: Outcome;
  let failover: Outcome;
  let continued: Outcome;
  let oneShot: Outcome;
  let spans: Span[];
  let bodiesFrom = 0;

  beforeAll(async () => {
    bodiesFrom = receiver.bodies.length;
    const { gw, dir } = await startTracedGateway(false);
    try {
      seeded = await seedAccount(gw.store, { purchased: 1_000_000 });
      plain = await complete(gw, seeded.secret, { model: 'svc-fast', messages: message(`Plain: ${PROMPT_MARKER} for Ada.`), max_tokens: 64 });
      streamed = await complete(gw, seeded.secret, {
        model: 'svc-fast',
        messages: message(`Streamed: ${PROMPT_MARKER} for Grace.`),
        max_tokens: 48,
        stream: true,
        stream_options: { include_usage: true },
      });
      failover = await complete(gw, seeded.secret, { model: 'svc-code', messages: message(`Failover: ${PROMPT_MARKER} for Alan.`), max_tokens: 32 });
      continued = await complete(
        gw,
        seeded.secret,
        { model: 'svc-fast', messages: message(`Continued: ${PROMPT_MARKER} for Barbara.`), max_tokens: 16 },
        { traceparent: `00-${CLIENT_TRACE_ID}-${CLIENT_PARENT_ID}-01` },
      );
      oneShot = await complete(gw, seeded.secret, { model: 'svc-smart', messages: message(`One shot: ${PROMPT_MARKER} for Frances.`), max_tokens: 24 });
    } finally {
      // Shuts tracing down with the gateway: the batch is flushed to the receiver.
      await gw.close();
      await rm(dir, { recursive: true, force: true });
    }
    spans = receiver.spans().filter((s) => s.service === 'svc-gateway-test');
  });

  const rootOf = (o: Outcome): Span => {
    const roots = spans.filter((s) => s.kind === SERVER && s.attrs['svc.request_id'] === o.requestId);
    expect(roots).toHaveLength(1);
    return roots[0] as Span;
  };
  const traceOf = (o: Outcome): Span[] => spans.filter((s) => s.traceId === rootOf(o).traceId);

  it('exports JSON to the receiver, one trace per request', () => {
    expect(receiver.bodies.length).toBeGreaterThan(bodiesFrom);
    expect(receiver.contentTypes.every((t) => t.startsWith('application/json'))).toBe(true);
    const ids = [plain, streamed, failover, continued, oneShot].map((o) => rootOf(o).traceId);
    expect(new Set(ids).size).toBe(5);
    // Every exported span belongs to one of the four requests' traces (the test made no other request).
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set(ids));
    expect(spans.filter((s) => s.kind === SERVER)).toHaveLength(5);
  });

  it.each([
    ['non-streaming', () => plain, 64],
    ['streaming', () => streamed, 48],
  ] as const)('%s: root SERVER span with authenticate, reserve, one attempt and settle as children, GenAI attributes', (_name, get, maxTokens) => {
    const o = get();
    const root = rootOf(o);
    const trace = traceOf(o);
    expect(root.parentSpanId).toBe('');
    expect(root.name).toBe('POST /v1/chat/completions');
    expect(trace.map((s) => s.name).sort()).toEqual(['POST /v1/chat/completions', `chat ${MODEL}`, 'svc.authenticate', 'svc.reserve', 'svc.settle'].sort());
    for (const child of trace.filter((s) => s !== root)) expect(child.parentSpanId, child.name).toBe(root.spanId);
    const byName = (n: string): Span => trace.find((s) => s.name === n) as Span;
    expect(byName('svc.authenticate').kind).toBe(INTERNAL);
    expect(byName('svc.reserve').kind).toBe(INTERNAL);
    expect(byName('svc.settle').attrs['svc.hold.outcome']).toBe('settled');
    const attempt = byName(`chat ${MODEL}`);
    expect(attempt.kind).toBe(CLIENT);
    expect(attempt.attrs).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'rec',
      'gen_ai.request.model': MODEL,
      'gen_ai.request.max_tokens': maxTokens,
      'svc.attempt.outcome': 'ok',
    });
    expect(attempt.statusCode).not.toBe(STATUS_ERROR);
    const usage = o.served.reply.usage as ExpectedUsage;
    expect(root.attrs).toMatchObject({
      'http.request.method': 'POST',
      'url.path': '/v1/chat/completions',
      'http.response.status_code': 200,
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'svc-fast',
      'gen_ai.usage.input_tokens': usage.prompt_tokens,
      'gen_ai.usage.output_tokens': usage.completion_tokens,
      'svc.credits': o.svc.credits_used,
      'svc.routed_model': `rec/${MODEL}`,
      'svc.key_id': seeded.keyId,
      'svc.attempts': 1,
    });
    expect(o.svc.credits_used).toBeGreaterThan(0);
    // The upstream got the request's trace id and the attempt span as its parent.
    expect(traceparentOf(o.served.headers)).toEqual({ traceId: root.traceId, parentId: attempt.spanId });
  });

  it('failover: each attempt is a CLIENT span of its own, with its outcome; each upstream saw its own attempt as parent', () => {
    const root = rootOf(failover);
    const attempts = traceOf(failover).filter((s) => s.kind === CLIENT);
    expect(attempts).toHaveLength(2);
    const [first, second] = [...attempts].sort((a, b) => (a.attrs['gen_ai.provider.name'] === 'down' ? -1 : b.attrs['gen_ai.provider.name'] === 'down' ? 1 : 0));
    for (const a of attempts) {
      expect(a.parentSpanId).toBe(root.spanId);
      expect(a.name).toBe(`chat ${MODEL}`);
    }
    expect(first?.attrs).toMatchObject({ 'gen_ai.provider.name': 'down', 'svc.attempt.outcome': 'http_503', 'error.type': 'http_503' });
    expect(first?.statusCode).toBe(STATUS_ERROR);
    expect(first?.attrs).not.toHaveProperty('gen_ai.response.model');
    expect(second?.attrs).toMatchObject({ 'gen_ai.provider.name': 'rec', 'svc.attempt.outcome': 'ok' });
    expect(root.attrs).toMatchObject({ 'svc.attempts': 2, 'svc.routed_model': `rec/${MODEL}`, 'gen_ai.request.model': 'svc-code', 'http.response.status_code': 200 });
    // Two upstream requests: the 503 one, then the served one, each under its own attempt span.
    expect(failover.upstreamRequests.map((r) => r.path.split('/')[1])).toEqual(['down', 'openai']);
    expect(traceparentOf(failover.upstreamRequests[0]?.headers ?? {})).toEqual({ traceId: root.traceId, parentId: first?.spanId });
    expect(traceparentOf(failover.served.headers)).toEqual({ traceId: root.traceId, parentId: second?.spanId });
  });

  it('a one-shot upstream call (upstream_streaming: false) records gen_ai.response.model as the upstream answered it', () => {
    const attempt = traceOf(oneShot).find((s) => s.kind === CLIENT) as Span;
    expect(attempt.attrs).toMatchObject({ 'gen_ai.provider.name': 'rec-oneshot', 'gen_ai.response.model': RESPONSE_MODEL, 'svc.attempt.outcome': 'ok' });
    expect(oneShot.served.stream).toBe(false);
  });

  // Bug: with `upstream_streaming: true` (the default) every attempt goes through adapter.stream(), and
  // RequestObservation.observeStream (src/observability/request-observation.ts:250) never sets
  // gen_ai.response.model: StreamEvent carries no model (src/providers/contract.ts; the OpenAI-compatible
  // parser reads `model` only for complete answers, src/providers/openai-compatible/wire-parse.ts:70).
  it.each([
    ['non-streaming', () => plain],
    ['streaming', () => streamed],
    ['failover (serving attempt)', () => failover],
  ] as const)('%s over a streaming upstream call: the attempt span has gen_ai.response.model', (_name, get) => {
    const attempt = traceOf(get()).find((s) => s.kind === CLIENT && s.attrs['svc.attempt.outcome'] === 'ok') as Span;
    expect(attempt.attrs['gen_ai.response.model']).toBe(RESPONSE_MODEL);
  });

  it("continues a client's traceparent: same trace id, the client's span as the root's parent", () => {
    const root = rootOf(continued);
    expect(root.traceId).toBe(CLIENT_TRACE_ID);
    expect(root.parentSpanId).toBe(CLIENT_PARENT_ID);
    const attempt = traceOf(continued).find((s) => s.kind === CLIENT) as Span;
    expect(traceparentOf(continued.served.headers)).toEqual({ traceId: CLIENT_TRACE_ID, parentId: attempt.spanId });
  });

  it('never exports the prompt or the answer text, nor the key secret', () => {
    const exported = receiver.bodies.slice(bodiesFrom).join('\n');
    expect(exported).toContain(seeded.keyId);
    expect(exported).not.toContain(PROMPT_MARKER);
    expect(exported).not.toContain(seeded.secret);
    expect(exported).not.toContain('gen_ai.input.messages');
    expect(exported).not.toContain('gen_ai.output.messages');
    expect(exported).not.toContain(plain.served.reply.text as string);
  });
});

// ---- tracing with content -------------------------------------------------------------------------------

describe('traces with recordContent on', () => {
  let plain: Outcome;
  let spans: Span[];
  const marker = 'Kilimanjaro-content-marker-9023';

  beforeAll(async () => {
    const from = receiver.bodies.length;
    const { gw, dir } = await startTracedGateway(true);
    try {
      const seeded = await seedAccount(gw.store, { purchased: 1_000_000 });
      plain = await complete(gw, seeded.secret, { model: 'svc-fast', messages: message(`Please: ${marker} for Edsger.`), max_tokens: 64 });
    } finally {
      await gw.close();
      await rm(dir, { recursive: true, force: true });
    }
    spans = receiver
      .spans()
      .filter((s) => s.attrs['svc.request_id'] === plain.requestId || s.name.startsWith('chat '))
      .filter((s, _i, all) => s.traceId === all.find((r) => r.attrs['svc.request_id'] === plain.requestId)?.traceId);
    expect(receiver.bodies.length).toBeGreaterThan(from);
  });

  it('puts the prompt in gen_ai.input.messages of the attempt span (and nowhere on the root)', () => {
    const attempt = spans.find((s) => s.kind === CLIENT) as Span;
    expect(attempt).toBeDefined();
    const input = JSON.parse(attempt.attrs['gen_ai.input.messages'] as string) as { role: string; content: string }[];
    expect(input).toEqual([{ role: 'user', content: `Please: ${marker} for Edsger.` }]);
    const root = spans.find((s) => s.kind === SERVER) as Span;
    expect(JSON.stringify(root.attrs)).not.toContain(marker);
    expect(traceparentOf(plain.served.headers)).toEqual({ traceId: root.traceId, parentId: attempt.spanId });
  });
});
