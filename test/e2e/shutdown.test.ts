/**
 * Graceful shutdown of a real gateway process (`bin/svc-gateway.js serve`, the built code), on a SQLite file
 * and on PostgreSQL (a fresh schema of the machine's server, 127.0.0.1:5432, database `test`; fails, never
 * skips, when it is unreachable): SIGTERM while 50 streams and one non-streaming request are in flight. Streams that can finish within
 * `server.shutdown_grace_ms` finish; the rest end with an explicit `gateway_shutting_down`
 * error event (carrying `svc`) and `[DONE]`; the non-streaming request gets a 503 and is charged its prompt and what the
 * upstream produced; a request sent during the drain is turned away (a new connection is refused, a
 * kept-alive one gets a 503); the process exits 0 and leaves no hold pending, a clean ledger, and
 * balance = granted - usage (docs/operations.md).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { creditCost } from '../../src/billing/pricing.js';
import { estimateDeliveredTokens, estimatePromptTokens } from '../../src/billing/token-estimate.js';
import { newId } from '../../src/core/ids.js';
import { createApiKey } from '../../src/keys/key-service.js';
import type { ChatMessage } from '../../src/openai/chat-types.js';
import { simulateCompletion } from '../../src/providers/sandbox/simulator.js';
import { CATALOG } from '../../src/routing/catalog.js';
import type { Store } from '../../src/store/types.js';
import { startInstance, stopInstance, type Instance } from '../cluster/cluster.js';
import { openClusterStore, rawQuery } from '../cluster/db.js';
import { sseData } from '../helpers/gateway.js';
import { closeAdmin, createTestSchema, dropTestSchema, POSTGRES_URL } from '../store/postgres-harness.js';

const GRACE_MS = 300;
/** 10 tokens/s: a 3-token answer ends 200 ms after its first token, a 60-token one 6 s after. */
const PACE = { time_to_first_token_ms: 50, tokens_per_second: 10 };
const MODEL = 'svc-smart';
const UPSTREAM_MODEL = 'sandbox-smart';
const PRICES = CATALOG[MODEL];
const STREAMS = 50;
const SHORT = 10;
const SHORT_MAX_TOKENS = 3;
/** A long answer's natural length, far beyond what the grace period lets through. */
const LONG_MIN_TOKENS = 60;
const GRANT = 1_000_000;
/** A few hundred prompt tokens, so that every charge is well above the 1-credit minimum. */
const CONTEXT: ChatMessage = { role: 'system', content: 'The keeper climbs the stairs at dusk and lights the lamp. '.repeat(28) };

const dir = mkdtempSync(join(tmpdir(), 'svc-shutdown-'));
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await closeAdmin();
});
/** The gateway's pool on PostgreSQL: small, the server's 100 connections are shared with other test files. */
const POSTGRES_POOL = 4;

function prompt(text: string): ChatMessage[] {
  return [CONTEXT, { role: 'user', content: text }];
}

/** The sandbox's natural answer length for these messages (it is deterministic). */
function naturalLength(messages: ChatMessage[]): number {
  return simulateCompletion({ messages, max_tokens: null }, UPSTREAM_MODEL).tokenDeltas.length;
}

/** Prompts whose sandbox answer is at least LONG_MIN_TOKENS long. */
function longPrompts(n: number, tag: string): ChatMessage[][] {
  const out: ChatMessage[][] = [];
  for (let i = 0; out.length < n; i++) {
    const messages = prompt(`${tag} ${i}: tell a long story about a lighthouse.`);
    if (naturalLength(messages) >= LONG_MIN_TOKENS) out.push(messages);
  }
  return out;
}

function writeConfig(): string {
  const path = join(dir, 'gateway.json');
  const tier = (model: string) => ({ targets: [{ provider: 'sandbox', model }] });
  writeFileSync(
    path,
    JSON.stringify({
      server: { shutdown_grace_ms: GRACE_MS, reaper_interval_ms: 1000 },
      providers: { sandbox: { type: 'sandbox', pace: PACE } },
      aliases: { 'svc-fast': tier('sandbox-fast'), 'svc-code': tier('sandbox-code'), 'svc-smart': tier(UPSTREAM_MODEL) },
    }),
  );
  return path;
}

async function seed(store: Store, name: string): Promise<{ accountId: string; secret: string }> {
  const account = await store.keys.createAccount({ id: newId('acct_'), name });
  await store.ledger.grant({ accountId: account.id, environment: 'live', kind: 'purchased', amount: GRANT, expiresAt: null, idempotencyKey: null });
  const { secret } = await createApiKey(store.keys, { accountId: account.id, environment: 'live', name: null, dailyCreditLimit: null });
  return { accountId: account.id, secret };
}

function post(url: string, secret: string, body: unknown, idempotencyKey?: string): Promise<Response> {
  return fetch(`${url}/chat/completions`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${secret}`,
      'content-type': 'application/json',
      ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
    },
    body: JSON.stringify(body),
  });
}

interface Answer {
  status: number;
  /** The error envelope's code, for an error status. */
  code: string | null;
  raw: string;
  headers: Record<string, unknown>;
}

/** A chat request on one given connection (an undici Client holds one). */
async function postOn(client: Client, secret: string, body: unknown): Promise<Answer> {
  const res = await client.request({
    path: '/v1/chat/completions',
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const raw = await res.body.text();
  const code = res.statusCode === 200 ? null : ((JSON.parse(raw) as { error?: { code: string } }).error?.code ?? null);
  return { status: res.statusCode, code, raw, headers: res.headers };
}

/** `ECONNREFUSED` (or another connection error code), else the status and error code. */
async function outcomeOf(attempt: Promise<Answer>): Promise<string> {
  try {
    const r = await attempt;
    return `${r.status} ${r.code ?? ''}`.trim();
  } catch (e) {
    return (e as { code?: string }).code ?? String(e);
  }
}

interface OpenStream {
  messages: ChatMessage[];
  /** Resolves once a chunk with non-empty content arrived. */
  firstContent: Promise<void>;
  /** The whole body, read to its end, and when it ended. */
  body: Promise<{ raw: string; endedAt: number }>;
}

function openStream(url: string, secret: string, body: { messages: ChatMessage[]; max_tokens?: number }, idempotencyKey?: string): OpenStream {
  let onFirst!: () => void;
  let onFirstFailed!: (e: unknown) => void;
  const firstContent = new Promise<void>((resolve, reject) => {
    onFirst = resolve;
    onFirstFailed = reject;
  });
  const read = async (): Promise<{ raw: string; endedAt: number }> => {
    const res = await post(url, secret, { model: MODEL, ...body, stream: true }, idempotencyKey);
    if (res.status !== 200) throw new Error(`stream answered ${res.status}: ${await res.text()}`);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let raw = '';
    let first = false;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      raw += decoder.decode(value, { stream: true });
      if (!first && /"content":"[^"]/.test(raw)) {
        first = true;
        onFirst();
      }
    }
    raw += decoder.decode();
    if (!first) throw new Error(`stream ended before any content: ${raw}`);
    return { raw, endedAt: performance.now() };
  };
  const bodyPromise = read();
  bodyPromise.catch(onFirstFailed);
  return { messages: body.messages, firstContent, body: bodyPromise };
}

interface Svc {
  credits_used: number;
  tokens_metered: { prompt: number; completion: number };
}

interface Chunk {
  object?: string;
  choices?: { delta: { content?: string }; finish_reason: string | null }[];
  svc?: Svc;
  error?: { code: string; type: string; message: string };
}

interface Shape {
  kind: 'finished' | 'interrupted';
  finishReason: string | null;
  svc: Svc;
  /** The content the client received, and in how many non-empty deltas. */
  text: string;
  deltas: number;
}

/** How a stream ended, asserting that it is one of the two allowed shapes. */
function shapeOf(raw: string): Shape {
  const data = sseData(raw);
  expect(data.at(-1)).toBe('[DONE]');
  const events = data.slice(0, -1).map((d) => JSON.parse(d) as Chunk);
  const choices = events.flatMap((e) => e.choices ?? []);
  const contents = choices.map((c) => c.delta.content ?? '').filter((c) => c !== '');
  const finishReason = choices.find((c) => c.finish_reason !== null)?.finish_reason ?? null;
  const received = { text: contents.join(''), deltas: contents.length };
  const last = events.at(-1)!;
  if (last.error === undefined) {
    // Finished: the last chunk carries the finish_reason and svc, then [DONE]; no error anywhere.
    expect(['stop', 'length']).toContain(finishReason);
    expect(events.some((e) => e.error !== undefined)).toBe(false);
    expect(last.object).toBe('chat.completion.chunk');
    expect(last.choices?.[0]?.finish_reason).toBe(finishReason);
    expect(last.svc).toBeDefined();
    return { kind: 'finished', finishReason, svc: last.svc!, ...received };
  }
  // Interrupted: the explicit error event, carrying svc, then [DONE]; no finish_reason, no chunk without choices.
  expect(last.error.code).toBe('gateway_shutting_down');
  expect(finishReason).toBeNull();
  expect(last.svc).toBeDefined();
  expect(events.slice(0, -1).every((e) => e.object === 'chat.completion.chunk' && e.choices?.length === 1)).toBe(true);
  expect(events.filter((e) => e.error !== undefined)).toHaveLength(1);
  const svc = last;
  return { kind: 'interrupted', finishReason, svc: svc.svc!, ...received };
}

describe.each(['sqlite', 'postgres'] as const)('graceful shutdown of a gateway process (SIGTERM) on %s', (kind) => {
  let databaseUrl: string;
  let schema: string | null = null;
  beforeAll(async () => {
    if (kind === 'sqlite') {
      databaseUrl = `sqlite:${join(dir, 'gateway.db')}`;
    } else {
      schema = await createTestSchema();
      databaseUrl = `${POSTGRES_URL}?schema=${schema}&max=${POSTGRES_POOL}`;
    }
  });
  afterAll(async () => {
    if (schema !== null) await dropTestSchema(schema);
  });

  it('finishes or explicitly ends 50 streams, answers 503 to a cut non-streaming request, settles every hold and exits 0', async () => {
    const seeding = await openClusterStore(databaseUrl);
    const streamer = await seed(seeding, 'streams');
    const blocking = await seed(seeding, 'non-streaming');
    const late = await seed(seeding, 'during the drain');
    await seeding.close();

    const [nonStreamMessages] = longPrompts(1, 'Blocking') as [ChatMessage[]];
    const gw: Instance = await startInstance(databaseUrl, writeConfig());
    const origin = new URL(gw.url).origin;
    /** One connection kept alive across the SIGTERM: a short stream on it, then a request during the drain. */
    const kept = new Client(origin);
    let shapes: Shape[];
    let streams: OpenStream[];
    try {
      const started = performance.now();
      const long = longPrompts(STREAMS - SHORT, 'Stream');
      streams = Array.from({ length: STREAMS }, (_, i) =>
        i < SHORT
          ? openStream(gw.url, streamer.secret, { messages: prompt(`Short ${i}: say hello.`), max_tokens: SHORT_MAX_TOKENS }, `idem-${i}`)
          : openStream(gw.url, streamer.secret, { messages: long[i - SHORT]! }, i % 2 === 0 ? `idem-${i}` : undefined),
      );
      const nonStreaming = post(gw.url, blocking.secret, { model: MODEL, messages: nonStreamMessages });
      const keptStream = postOn(kept, late.secret, { model: MODEL, messages: prompt('Kept: say hello.'), max_tokens: 2, stream: true });

      await Promise.all(streams.map((s) => s.firstContent));
      const exited = new Promise<{ code: number | null; signal: string | null; at: number }>((resolve) =>
        gw.child.once('exit', (code, signal) => resolve({ code, signal, at: performance.now() })),
      );
      const sigtermAt = performance.now();
      gw.child.kill('SIGTERM');

      // New requests during the drain. On a new connection: the listening socket is closed.
      await new Promise((r) => setTimeout(r, 100));
      const fresh = new Client(origin);
      const onNewConnection = await outcomeOf(postOn(fresh, late.secret, { model: MODEL, messages: prompt('Too late?') }));
      await fresh.destroy();
      // On a connection kept alive from before the signal, once its stream finished inside the grace period:
      // the gateway answers 503 and closes the connection.
      const keptDone = await keptStream;
      const keptEndedAt = performance.now();
      // Or, when the server closed that connection as idle first, a connection error: retryable either way.
      const onKeptConnection = await postOn(kept, late.secret, { model: MODEL, messages: prompt('Too late?') }).catch(
        (e: unknown) => ({ status: -1, code: (e as { code?: string }).code ?? String(e), raw: '', headers: {} }),
      );

      const bodies = await Promise.all(streams.map((s) => s.body));
      shapes = bodies.map((b) => shapeOf(b.raw));
      const blocked = await nonStreaming;
      const blockedBody = (await blocked.json()) as { error?: { code: string; type: string } };
      const exit = await exited;

      const finished = shapes.filter((s) => s.kind === 'finished');
      const interrupted = shapes.filter((s) => s.kind === 'interrupted');
      const lastStreamEnd = Math.max(...bodies.map((b) => b.endedAt));
      console.log(
        `[shutdown ${kind}] first content on all ${STREAMS} streams ${Math.round(sigtermAt - started)} ms after they were sent; ` +
          `SIGTERM -> last stream ended ${Math.round(lastStreamEnd - sigtermAt)} ms, -> exit ${Math.round(exit.at - sigtermAt)} ms ` +
          `(grace ${GRACE_MS} ms); streams finished ${finished.length}, interrupted ${interrupted.length} ` +
          `(${interrupted.map((s) => s.deltas).join(',')} content deltas received); during the drain: new connection ` +
          `${onNewConnection}, kept-alive connection ${onKeptConnection.status} ${onKeptConnection.code} ` +
          `(+${Math.round(keptEndedAt - sigtermAt)} ms); non-streaming: ${blocked.status} ${blockedBody.error?.code ?? ''}`,
      );

      // Every short stream finished inside the grace period; every long one was ended explicitly.
      expect(shapes.slice(0, SHORT).map((s) => s.kind)).toEqual(Array(SHORT).fill('finished'));
      expect(shapes.slice(SHORT).map((s) => s.kind)).toEqual(Array(STREAMS - SHORT).fill('interrupted'));
      expect(finished.map((s) => s.finishReason)).toEqual(Array(SHORT).fill('length'));

      // New work during the drain is turned away, either way in a manner that tells a client to retry.
      expect(onNewConnection).toBe('ECONNREFUSED');
      expect(keptDone.status).toBe(200);
      expect(shapeOf(keptDone.raw).kind).toBe('finished');
      // ECONNREFUSED too: when the server closed the kept-alive connection as idle before this request went
      // out, undici opens a new one for it, and the closed listener refuses it, as it did `fresh` above.
      if (onKeptConnection.status === -1) expect(onKeptConnection.code).toMatch(/^(UND_ERR_SOCKET|ECONNRESET|UND_ERR_CLOSED|ECONNREFUSED)$/);
      else expect(onKeptConnection).toMatchObject({ status: 503, code: 'gateway_shutting_down', headers: { 'retry-after': '1', connection: 'close' } });

      // The non-streaming request outlived the grace period.
      expect(blocked.status).toBe(503);
      expect(blockedBody.error?.code).toBe('gateway_shutting_down');
      expect(blocked.headers.get('retry-after')).toBe('1');

      expect(exit).toMatchObject({ code: 0, signal: null });
      // Grace, then the interrupted completions settle, their last frames go out and the process exits.
      expect(exit.at - sigtermAt).toBeLessThan(GRACE_MS + 1500);
    } finally {
      await kept.destroy();
      await stopInstance(gw, 'SIGKILL');
    }

    // Each stream's charge, as its `svc` chunk told it: the prompt, and the output the upstream produced:
    // all of it for a finished answer (the upstream's usage), what the client received for an interrupted one.
    streams.forEach((stream, i) => {
      const s = shapes[i]!;
      const promptTokens = estimatePromptTokens(stream.messages);
      const completionTokens = s.kind === 'finished' ? SHORT_MAX_TOKENS : estimateDeliveredTokens(s.text, s.deltas);
      expect(s.svc.tokens_metered).toMatchObject({ prompt: promptTokens, completion: completionTokens });
      expect(completionTokens).toBeGreaterThan(0);
      expect(s.svc.credits_used).toBe(creditCost(PRICES, promptTokens, completionTokens));
    });

    const store = await openClusterStore(databaseUrl);
    try {
      expect(await store.ledger.countPendingHolds()).toBe(0);
      expect((await store.ledger.audit()).findings).toEqual([]);
      const today = new Date().toISOString().slice(0, 10);
      // From yesterday: a run across midnight UTC records its first requests on the day before.
      const since = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
      const usage = async (accountId: string) => {
        const rows = await store.usage.rollup({ accountId, environment: 'live', startDay: since, endDay: today, model: null });
        return { requests: rows.reduce((s, r) => s + r.requests, 0), credits: rows.reduce((s, r) => s + r.credits, 0) };
      };

      const streamed = await usage(streamer.accountId);
      const streamBalance = await store.ledger.balance(streamer.accountId, 'live');
      expect(streamed.requests).toBe(STREAMS);
      expect(streamBalance.reserved).toBe(0);
      expect(streamBalance.purchased).toBe(GRANT - streamed.credits);
      // What the streams' `svc` chunks told their clients is what the ledger charged.
      expect(shapes.reduce((sum, s) => sum + s.svc.credits_used, 0)).toBe(streamed.credits);
      const outcomes = await rawQuery<{ outcome: string; n: number }>(
        databaseUrl,
        `SELECT outcome, COUNT(*) AS n FROM usage_events WHERE account_id = '${streamer.accountId}' GROUP BY outcome ORDER BY outcome`,
      );
      expect(outcomes.map((o) => [o.outcome, Number(o.n)])).toEqual([
        ['completed', SHORT],
        ['shutdown', STREAMS - SHORT],
      ]);

      // Idempotency keys (the short streams and every other long one carried one): a finished answer is kept
      // for replay, an interrupted one's key is released so that a retry runs again; none is left in flight.
      const records = await rawQuery<{ idempotency_key: string; state: string }>(
        databaseUrl,
        'SELECT idempotency_key, state FROM idempotency_records ORDER BY idempotency_key',
      );
      expect(records.map((r) => [r.idempotency_key, r.state])).toEqual(
        Array.from({ length: SHORT }, (_, i) => [`idem-${i}`, 'completed']),
      );

      // The non-streaming request: the upstream had accepted it, so it pays its prompt and what was produced.
      const [event] = await rawQuery<{ outcome: string; prompt_tokens: number; completion_tokens: number; credits: number }>(
        databaseUrl,
        `SELECT outcome, prompt_tokens, completion_tokens, credits FROM usage_events WHERE account_id = '${blocking.accountId}'`,
      );
      const charged = { outcome: event!.outcome, prompt: Number(event!.prompt_tokens), completion: Number(event!.completion_tokens), credits: Number(event!.credits) };
      expect(charged.outcome).toBe('shutdown');
      expect(charged.prompt).toBe(estimatePromptTokens(nonStreamMessages));
      expect(charged.completion).toBeGreaterThan(0);
      expect(charged.completion).toBeLessThan(naturalLength(nonStreamMessages));
      expect(charged.credits).toBe(creditCost(PRICES, charged.prompt, charged.completion));
      expect(await usage(blocking.accountId)).toEqual({ requests: 1, credits: charged.credits });
      const blockedBalance = await store.ledger.balance(blocking.accountId, 'live');
      expect(blockedBalance).toMatchObject({ reserved: 0, purchased: GRANT - charged.credits });

      // The drain-time requests were never admitted: only the finished stream of that account is billed.
      expect((await usage(late.accountId)).requests).toBe(1);
      console.log(
        `[shutdown ${kind}] non-streaming request charged ${charged.credits} credits (${charged.prompt} prompt + ${charged.completion} ` +
          `produced tokens of ${naturalLength(nonStreamMessages)}); streams charged ${streamed.credits} credits over ${streamed.requests} usage events`,
      );
    } finally {
      await store.close();
    }
  });
});
