/**
 * The fault matrix: every way a primary upstream can fail x {streaming, non-streaming}, with the sandbox
 * running as two real HTTP servers (primary and secondary) that serve the same deterministic model. For each
 * fault the client must get the whole answer (exactly what an unfailing upstream would have said, even when
 * the secondary continued a stream the primary started), within the primary's deadlines, charged once for
 * what it received, and the failed upstream call must be closed, not left hanging.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { creditCost } from '../../src/billing/pricing.js';
import { parseConfig } from '../../src/config/schema.js';
import type { SandboxFault } from '../../src/providers/sandbox/faults.js';
import { CATALOG } from '../../src/routing/catalog.js';
import { startSandboxServer, type SandboxServer } from '../../src/runtime/node/sandbox-server.js';
import { chat, sseData, startTestGateway, type Seeded, type TestGateway } from '../helpers/gateway.js';
import { closedPort } from '../providers/helpers/fixture-server.js';

const DEADLINES = { connect_ms: 400, first_token_ms: 400, between_chunks_ms: 300, total_ms: 4000 };
const KEEPALIVE_MS = 120;
const SECONDARY_DEADLINES = { connect_ms: 1000, first_token_ms: 1000, between_chunks_ms: 1000, total_ms: 5000 };
/** The slowest a case may take: one primary deadline, then the secondary's instant answer, plus slack for CI. */
const CASE_BUDGET_MS = 2500;

let primary: SandboxServer;
let secondary: SandboxServer;
let gw: TestGateway;
let seeded: Seeded;

beforeAll(async () => {
  const instant = { timeToFirstTokenMs: 0, tokensPerSecond: 0 };
  primary = await startSandboxServer({ port: 0, pace: instant });
  secondary = await startSandboxServer({ port: 0, pace: instant });
  const secondaryTarget = { provider: 'secondary', model: 'm' };
  const config = parseConfig({
    // Breakers are exercised on their own below; here every request must meet the failing primary.
    health: { failure_threshold: 1_000 },
    server: { keepalive_ms: KEEPALIVE_MS },
    providers: {
      primary: { type: 'openai-compatible', base_url: primary.url, paid: false, timeouts: DEADLINES },
      dead: { type: 'openai-compatible', base_url: `http://127.0.0.1:${await closedPort()}/v1`, paid: false, timeouts: DEADLINES },
      secondary: { type: 'openai-compatible', base_url: secondary.url, paid: false, timeouts: SECONDARY_DEADLINES },
    },
    aliases: {
      'svc-fast': { targets: [{ provider: 'primary', model: 'm' }, secondaryTarget] },
      'svc-code': { targets: [{ provider: 'dead', model: 'm' }, secondaryTarget] },
      'svc-smart': { targets: [{ provider: 'primary', model: 'm' }, secondaryTarget] },
    },
  });
  gw = await startTestGateway({ config });
  seeded = await gw.seed({ purchased: 1_000_000 });
});
afterEach(() => {
  primary.setFault(null);
  secondary.setFault(null);
});
afterAll(async () => {
  await gw.close();
  await primary.close();
  await secondary.close();
});

interface Svc {
  routed_provider: string;
  routed_model: string;
  credits_used: number;
  tokens_metered: { prompt: number; completion: number };
  attempts?: { provider: string; outcome: string; continuation?: boolean }[];
}

interface Outcome {
  status: number;
  text: string;
  /** Content deltas the client received (streaming), or the answer's words (non-streaming). */
  pieces: number;
  finishReason: string | null;
  svc: Svc | null;
  errorCode: string | null;
  ms: number;
}

const PROMPT = 'Summarize the plot of a short story about a lighthouse keeper.';
const request = (model: string, stream: boolean) => ({
  model,
  messages: [{ role: 'user', content: PROMPT }],
  // Above the sandbox's longest natural answer: the reference is never cut by the bound.
  max_tokens: 400,
  stream,
});

async function call(model: string, stream: boolean): Promise<Outcome> {
  const started = Date.now();
  const res = await chat(gw, seeded.secret, request(model, stream));
  if (!stream || res.status !== 200) {
    const json = (await res.json()) as {
      choices?: { message: { content: string }; finish_reason: string }[];
      svc?: Svc;
      error?: { code: string };
    };
    const text = json.choices?.[0]?.message.content ?? '';
    return {
      status: res.status,
      text,
      pieces: text.split(' ').filter(Boolean).length,
      finishReason: json.choices?.[0]?.finish_reason ?? null,
      svc: json.svc ?? null,
      errorCode: json.error?.code ?? null,
      ms: Date.now() - started,
    };
  }
  const data = sseData(await res.text());
  expect(data.at(-1)).toBe('[DONE]');
  let text = '';
  let pieces = 0;
  let finishReason: string | null = null;
  let svc: Svc | null = null;
  let errorCode: string | null = null;
  for (const d of data.slice(0, -1)) {
    const chunk = JSON.parse(d) as {
      choices?: { delta: { content?: string }; finish_reason: string | null }[];
      svc?: Svc;
      error?: { code: string };
    };
    if (chunk.error) errorCode = chunk.error.code;
    if (chunk.svc) svc = chunk.svc;
    const choice = chunk.choices?.[0];
    if (choice?.delta.content) {
      text += choice.delta.content;
      pieces++;
    }
    if (choice?.finish_reason) finishReason = choice.finish_reason;
  }
  return { status: res.status, text, pieces, finishReason, svc, errorCode, ms: Date.now() - started };
}

/** What the model says when nothing fails: asked of the secondary directly. */
async function reference(): Promise<string> {
  const res = await fetch(`${secondary.url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: PROMPT }], max_tokens: 400 }),
  });
  return ((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message.content ?? '';
}

async function balance(): Promise<number> {
  return (await gw.store.ledger.balance(seeded.accountId, 'live')).purchased;
}

/** The failed upstream call was closed by the gateway: nothing stays in flight on the primary. */
async function primaryDrained(): Promise<void> {
  const until = Date.now() + 2000;
  while (primary.stats().inFlight > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  expect(primary.stats().inFlight).toBe(0);
}

interface Totals {
  requests: number;
  prompt: number;
  completion: number;
  credits: number;
}

/** Today's usage events of the test account, summed (the rollup the client's /v1/usage reads). */
async function usageTotals(): Promise<Totals> {
  const today = new Date().toISOString().slice(0, 10);
  // From yesterday: a run across midnight UTC records its first requests on the day before.
  const since = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
  const rows = await gw.store.usage.rollup({ accountId: seeded.accountId, environment: 'live', startDay: since, endDay: today, model: null });
  return rows.reduce(
    (t, r) => ({ requests: t.requests + r.requests, prompt: t.prompt + r.promptTokens, completion: t.completion + r.completionTokens, credits: t.credits + r.credits }),
    { requests: 0, prompt: 0, completion: 0, credits: 0 },
  );
}

/** One usage event since `before`, charging its prompt and `completion` tokens, and nothing else. */
async function expectOneEventCharging(before: Totals, balanceBefore: number, model: 'svc-fast' | 'svc-smart', completion: number | 'some'): Promise<void> {
  const after = await usageTotals();
  expect(after.requests - before.requests).toBe(1);
  const prompt = after.prompt - before.prompt;
  const produced = after.completion - before.completion;
  expect(prompt).toBeGreaterThan(0);
  if (completion === 'some') expect(produced).toBeGreaterThan(0);
  else expect(produced).toBe(completion);
  const credits = after.credits - before.credits;
  expect(credits).toBe(creditCost(CATALOG[model], prompt, produced));
  expect(balanceBefore - (await balance())).toBe(credits);
}

function expectChargedOnce(svc: Svc, model: 'svc-fast' | 'svc-code', before: number, after: number): void {
  expect(before - after).toBe(svc.credits_used);
  expect(svc.credits_used).toBe(creditCost(CATALOG[model], svc.tokens_metered.prompt, svc.tokens_metered.completion));
}

type Case = [name: string, fault: SandboxFault | null, outcome: string, midStream: boolean];
const CASES: Case[] = [
  ['500', { type: 'status', status: 500 }, 'http_500', false],
  ['429', { type: 'status', status: 429, retryAfterSeconds: 1 }, 'http_429', false],
  ['connection refused', null, 'connect', false],
  ['connection reset', { type: 'reset' }, 'connect', false],
  ['stall before the status line', { type: 'stall_before_first_token', headers: false }, 'timeout', false],
  ['stall after the headers, before the first byte', { type: 'stall_before_first_token', headers: true }, 'timeout', false],
  ['first byte later than the deadline', { type: 'slow_first_token', ms: 1500 }, 'timeout', false],
  ['stall mid-stream', { type: 'stall_after_tokens', tokens: 6 }, 'timeout', true],
  ['cut mid-stream', { type: 'cut_after_tokens', tokens: 6 }, 'protocol', true],
  ['reset mid-stream', { type: 'reset', afterTokens: 6 }, 'connect', true],
  ['malformed chunk', { type: 'malformed_chunk', afterTokens: 6 }, 'protocol', true],
];

describe.each([true, false])('stream=%s', (stream) => {
  it.each(CASES)('%s on the primary: the whole answer, in time, charged once', async (_name, fault, outcome, midStream) => {
    const model = fault === null ? 'svc-code' : 'svc-fast';
    primary.setFault(fault);
    const expected = await reference();
    const before = await balance();

    const got = await call(model, stream);

    expect(got.status).toBe(200);
    expect(got.errorCode).toBeNull();
    expect(got.text).toBe(expected);
    expect(got.finishReason).toBe('stop');
    expect(got.ms).toBeLessThan(CASE_BUDGET_MS);
    const svc = got.svc as Svc;
    expect(svc.routed_provider).toBe('secondary');
    expect(svc.attempts?.map((a) => a.outcome)).toEqual([outcome, 'ok']);
    // A stream the client already holds part of is continued; a non-streaming answer is started over.
    expect(svc.attempts?.[1]?.continuation ?? false).toBe(stream && midStream);
    expect(svc.tokens_metered.completion).toBeGreaterThanOrEqual(got.pieces);
    if (!(stream && midStream)) expect(svc.tokens_metered.completion).toBe(got.pieces);
    expectChargedOnce(svc, model, before, await balance());
    expect(await gw.store.ledger.countPendingHolds()).toBe(0);
    await primaryDrained();
  });
});

describe('while failover waits', () => {
  it('a stream carries SSE comments, so proxies keep the connection open', async () => {
    primary.setFault({ type: 'stall_before_first_token', headers: true });
    const res = await chat(gw, seeded.secret, request('svc-fast', true));
    const raw = await res.text();
    // The role chunk first, then silence until the primary's first-token deadline: filled with comments.
    const blocks = raw.split('\n\n');
    expect(blocks[0]).toMatch(/^data: /);
    expect(blocks[1]).toBe(': keepalive');
    expect(sseData(raw).at(-1)).toBe('[DONE]');
  });
});

describe('when the client hangs up', () => {
  /** Faster than any of the primary's deadlines: only the hang-up can have closed the upstream call. */
  const AT_ONCE_MS = 200;

  async function inFlightWithin(ms: number): Promise<number> {
    const until = Date.now() + ms;
    while (primary.stats().inFlight > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    return primary.stats().inFlight;
  }

  it('mid-stream: the upstream call is closed at once and the delivered part is charged', async () => {
    primary.setFault({ type: 'stall_after_tokens', tokens: 5 });
    const before = await balance();
    const abort = new AbortController();
    const res = await chat(gw, seeded.secret, request('svc-fast', true), { signal: abort.signal });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    let seen = '';
    while (!seen.includes('"content"') || (seen.match(/"content":"[^"]+"/g) ?? []).length < 5) {
      const { value } = await reader.read();
      seen += new TextDecoder().decode(value);
    }
    expect(primary.stats().inFlight).toBe(1);
    abort.abort();
    expect(await inFlightWithin(AT_ONCE_MS)).toBe(0);
    await waitForNoHold();
    const charged = before - (await balance());
    expect(charged).toBeGreaterThan(0);
    expect(charged).toBeLessThan(creditCost(CATALOG['svc-fast'], 100, 400));
  });

  it('before the first token of a non-streaming answer: closed at once, the accepted prompt charged', async () => {
    primary.setFault({ type: 'stall_before_first_token', headers: true });
    const before = await balance();
    const usageBefore = await usageTotals();
    const abort = new AbortController();
    const pending = chat(gw, seeded.secret, request('svc-fast', false), { signal: abort.signal }).catch(() => null);
    const until = Date.now() + 1000;
    while (primary.stats().inFlight === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    expect(primary.stats().inFlight).toBe(1);
    abort.abort();
    await pending;
    expect(await inFlightWithin(AT_ONCE_MS)).toBe(0);
    await waitForNoHold();
    // The primary answered 200: from then on the provider bills the prompt, and so does the gateway.
    await expectOneEventCharging(usageBefore, before, 'svc-fast', 0);
  });

  it('before any upstream answered: closed at once, nothing charged', async () => {
    primary.setFault({ type: 'stall_before_first_token', headers: false });
    const before = await balance();
    const usageBefore = await usageTotals();
    const abort = new AbortController();
    const pending = chat(gw, seeded.secret, request('svc-fast', false), { signal: abort.signal }).catch(() => null);
    const until = Date.now() + 1000;
    while (primary.stats().inFlight === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    expect(primary.stats().inFlight).toBe(1);
    abort.abort();
    await pending;
    expect(await inFlightWithin(AT_ONCE_MS)).toBe(0);
    await waitForNoHold();
    expect(await balance()).toBe(before);
    expect((await usageTotals()).requests).toBe(usageBefore.requests);
  });
});

async function waitForNoHold(): Promise<void> {
  const until = Date.now() + 2000;
  while ((await gw.store.ledger.countPendingHolds()) > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  expect(await gw.store.ledger.countPendingHolds()).toBe(0);
}

describe('when no target can finish the answer', () => {
  it('a stream cut on both ends with svc, an explicit error and [DONE], charging what was delivered', async () => {
    primary.setFault({ type: 'cut_after_tokens', tokens: 4 });
    secondary.setFault({ type: 'cut_after_tokens', tokens: 3 });
    const before = await balance();
    const got = await call('svc-fast', true);
    expect(got.status).toBe(200);
    expect(got.errorCode).toBe('upstream_stream_error');
    expect(got.pieces).toBe(7);
    const svc = got.svc as Svc;
    expect(svc.attempts?.map((a) => a.outcome)).toEqual(['protocol', 'protocol']);
    expect(svc.tokens_metered.completion).toBeGreaterThanOrEqual(7);
    expect(svc.credits_used).toBeGreaterThan(0);
    expectChargedOnce(svc, 'svc-fast', before, await balance());
    expect(await gw.store.ledger.countPendingHolds()).toBe(0);
  });

  it('a non-streaming request cut on both answers 502 and charges the prompt and the last attempt\'s output', async () => {
    primary.setFault({ type: 'cut_after_tokens', tokens: 4 });
    secondary.setFault({ type: 'cut_after_tokens', tokens: 3 });
    const before = await balance();
    const usageBefore = await usageTotals();
    const got = await call('svc-fast', false);
    expect(got.status).toBe(502);
    expect(got.errorCode).toBe('upstream_error');
    // Both upstreams accepted and produced; the client pays its prompt once and the answer in progress (the
    // secondary's 3 words, counted from their text since no usage came), not the primary's 4, which the
    // restart threw away.
    await expectOneEventCharging(usageBefore, before, 'svc-fast', 'some');
    const produced = (await usageTotals()).completion - usageBefore.completion;
    expect(produced).toBeGreaterThanOrEqual(3);
    expect(produced).toBeLessThan(7);
    expect(await gw.store.ledger.countPendingHolds()).toBe(0);
  });

  it.each([true, false])('stream=%s: silent upstreams end within the deadlines, never hang, charge the accepted prompt', async (stream) => {
    primary.setFault({ type: 'stall_before_first_token', headers: true });
    secondary.setFault({ type: 'stall_before_first_token', headers: false });
    const before = await balance();
    const usageBefore = await usageTotals();
    const got = await call('svc-smart', stream);
    // The primary accepted, so a stream had started; the secondary never answered at all.
    if (stream) {
      expect(got.status).toBe(200);
      expect(got.errorCode).toBe('upstream_stream_error');
      expect(got.pieces).toBe(0);
    } else {
      expect(got.status).toBe(504);
      expect(got.errorCode).toBe('upstream_timeout');
    }
    // The primary's first-token deadline, then the secondary's connect deadline, and nothing more.
    expect(got.ms).toBeGreaterThanOrEqual(1400);
    expect(got.ms).toBeLessThan(3000);
    // The primary answered 200 before going silent: its prompt is billed, so it is charged, once.
    await expectOneEventCharging(usageBefore, before, 'svc-smart', 0);
    expect(await gw.store.ledger.countPendingHolds()).toBe(0);
    await primaryDrained();
  });
});
