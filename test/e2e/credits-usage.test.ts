/**
 * GET /v1/credits and GET /v1/usage against a gateway whose clock (app and store) is a ManualClock, so
 * grant expiry, UTC days and the default reporting period can be crossed on purpose.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { chat, startTestGateway, type Seeded, type TestGateway } from '../helpers/gateway.js';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
/** 2026-03-10T12:00:00Z */
const T0 = Date.UTC(2026, 2, 10, 12);

const clock = new ManualClock(T0);
let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway({ clock });
});
afterAll(() => gw.close());

interface CreditBody {
  object: string;
  account_id: string;
  environment: string;
  total_credits: number;
  earned_credits: { balance: number; expires_at: string | null; days_remaining: number | null };
  purchased_credits: { balance: number; expires_at: null };
  reserved_credits: number;
  currency: string;
}

interface Totals {
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  credits: number;
}
interface UsageBody {
  object: string;
  account_id: string;
  environment: string;
  model: string | null;
  period_start: string;
  period_end: string;
  total_requests: number;
  total_prompt_tokens: number;
  total_completion_tokens: number;
  total_credits_spent: number;
  total_credits: number;
  breakdown_by_model: Record<string, Totals>;
  breakdown_by_day: (Totals & { date: string })[];
}

interface Svc {
  credits_used: number;
  balance_remaining: number;
  tokens_metered: { prompt: number; completion: number; total: number };
}

async function getJson<T>(secret: string, path: string): Promise<T> {
  const res = await fetch(`${gw.url}${path}`, { headers: { authorization: `Bearer ${secret}` } });
  const body = (await res.json()) as T;
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body;
}

const credits = (secret: string): Promise<CreditBody> => getJson<CreditBody>(secret, '/credits');
const usage = (secret: string, query = ''): Promise<UsageBody> => getJson<UsageBody>(secret, `/usage${query}`);

async function complete(secret: string, model: string, content: string, maxTokens = 40): Promise<Svc> {
  const res = await chat(gw, secret, { model, messages: [{ role: 'user', content }], max_tokens: maxTokens });
  const body = (await res.json()) as { svc: Svc };
  expect(res.status, JSON.stringify(body)).toBe(200);
  expect(body.svc.credits_used).toBeGreaterThan(0);
  return body.svc;
}

describe('GET /v1/credits', () => {
  let acct: Seeded;
  const soon = T0 + 2.5 * DAY_MS; // 2026-03-13T00:00:00Z
  const later = T0 + 10 * DAY_MS + 5 * HOUR_MS; // 2026-03-20T17:00:00Z

  beforeAll(async () => {
    clock.set(T0);
    acct = await gw.seed({ purchased: 10_000, earned: [{ amount: 300, expiresAt: later }, { amount: 500, expiresAt: soon }] });
  });

  it('reports earned (summed, soonest expiry) and purchased separately', async () => {
    clock.set(T0);
    const c = await credits(acct.secret);
    expect(c).toEqual({
      object: 'credit_balance',
      account_id: acct.accountId,
      environment: 'live',
      total_credits: 10_800,
      earned_credits: { balance: 800, expires_at: '2026-03-13T00:00:00.000Z', days_remaining: 3 },
      purchased_credits: { balance: 10_000, expires_at: null },
      reserved_credits: 0,
      currency: 'SVC_CREDITS',
    });
  });

  it('days_remaining is the ceiling of the days left', async () => {
    clock.set(soon - 2 * DAY_MS); // exactly 2 days left
    expect((await credits(acct.secret)).earned_credits.days_remaining).toBe(2);
    clock.set(soon - 2 * DAY_MS + 1); // a hair under 2 days
    expect((await credits(acct.secret)).earned_credits.days_remaining).toBe(2);
    clock.set(soon - 2 * DAY_MS - 1); // a hair over 2 days
    expect((await credits(acct.secret)).earned_credits.days_remaining).toBe(3);
    clock.set(soon - 1); // 1 ms left: still counts, 1 day remaining
    const c = await credits(acct.secret);
    expect(c.earned_credits).toEqual({ balance: 800, expires_at: '2026-03-13T00:00:00.000Z', days_remaining: 1 });
  });

  it('a grant no longer counts once the clock passes its expiry', async () => {
    clock.set(soon); // expires at expires_at exactly
    let c = await credits(acct.secret);
    expect(c.earned_credits).toEqual({ balance: 300, expires_at: '2026-03-20T17:00:00.000Z', days_remaining: 8 });
    expect(c.total_credits).toBe(10_300);
    clock.set(T0 + 3 * DAY_MS);
    c = await credits(acct.secret);
    expect(c.earned_credits).toEqual({ balance: 300, expires_at: '2026-03-20T17:00:00.000Z', days_remaining: 8 });
    expect(c.purchased_credits.balance).toBe(10_000);
    expect(c.total_credits).toBe(10_300);
  });

  it('earned credits are spent before purchased ones', async () => {
    clock.set(T0 + 3 * DAY_MS);
    const svc = await complete(acct.secret, 'svc-fast', 'Classify the sentiment: what a lovely day.');
    const c = await credits(acct.secret);
    expect(c.earned_credits.balance).toBe(300 - svc.credits_used);
    expect(c.purchased_credits.balance).toBe(10_000);
    expect(c.total_credits).toBe(10_300 - svc.credits_used);
    expect(svc.balance_remaining).toBe(c.total_credits);
    expect(c.reserved_credits).toBe(0);
  });

  it('all earned credits expired: balance 0, expires_at and days_remaining null', async () => {
    clock.set(later);
    const c = await credits(acct.secret);
    expect(c.earned_credits).toEqual({ balance: 0, expires_at: null, days_remaining: null });
    expect(c.total_credits).toBe(c.purchased_credits.balance);
  });

  it('spends the soonest-expiring earned grant first, then spills into purchased', async () => {
    clock.set(T0);
    const a = await gw.seed({
      purchased: 5_000,
      earned: [
        { amount: 2, expiresAt: T0 + 5 * DAY_MS },
        { amount: 1, expiresAt: T0 + DAY_MS },
      ],
    });
    const svc = await complete(a.secret, 'svc-smart', 'Prove that there are infinitely many primes, step by step. '.repeat(4), 120);
    expect(svc.credits_used).toBeGreaterThan(3);
    const c = await credits(a.secret);
    expect(c.earned_credits).toEqual({ balance: 0, expires_at: null, days_remaining: null });
    expect(c.purchased_credits.balance).toBe(5_000 - (svc.credits_used - 3));
    expect(await gw.store.ledger.countPendingHolds(a.accountId)).toBe(0);

    // With a small request only the soonest grant is touched: the next expiry moves to the later grant.
    const b = await gw.seed({
      purchased: 5_000,
      earned: [
        { amount: 500, expiresAt: T0 + 5 * DAY_MS },
        { amount: 1, expiresAt: T0 + DAY_MS },
      ],
    });
    const small = await complete(b.secret, 'svc-fast', 'hi', 5);
    expect(small.credits_used).toBe(1);
    const cb = await credits(b.secret);
    expect(cb.earned_credits).toEqual({ balance: 500, expires_at: new Date(T0 + 5 * DAY_MS).toISOString(), days_remaining: 5 });
    expect(cb.purchased_credits.balance).toBe(5_000);
  });

  it('a test key reports its own environment', async () => {
    clock.set(T0);
    const t = await gw.seed({ environment: 'test', purchased: 42 });
    expect(await credits(t.secret)).toMatchObject({
      environment: 'test',
      total_credits: 42,
      earned_credits: { balance: 0, expires_at: null, days_remaining: null },
      purchased_credits: { balance: 42, expires_at: null },
    });
  });
});

describe('GET /v1/usage', () => {
  const DAY1 = '2026-03-10';
  const DAY2 = '2026-03-11';
  let acct: Seeded;
  let before: number;
  const calls: { day: string; model: string; svc: Svc }[] = [];

  const sum = (rows: typeof calls): Totals => ({
    requests: rows.length,
    prompt_tokens: rows.reduce((n, r) => n + r.svc.tokens_metered.prompt, 0),
    completion_tokens: rows.reduce((n, r) => n + r.svc.tokens_metered.completion, 0),
    credits: rows.reduce((n, r) => n + r.svc.credits_used, 0),
  });

  beforeAll(async () => {
    clock.set(Date.UTC(2026, 2, 10, 9));
    acct = await gw.seed({ purchased: 50_000 });
    const b = await gw.store.ledger.balance(acct.accountId, 'live');
    before = b.earned + b.purchased;
    const run = async (at: number, model: string, content: string): Promise<void> => {
      clock.set(at);
      calls.push({ day: new Date(at).toISOString().slice(0, 10), model, svc: await complete(acct.secret, model, content) });
    };
    await run(Date.UTC(2026, 2, 10, 9), 'svc-fast', 'Summarize: the cat sat on the mat.');
    await run(Date.UTC(2026, 2, 10, 15), 'svc-code', 'Write a Python function that reverses a linked list.');
    // The last millisecond of day 1 and the first of day 2.
    await run(Date.UTC(2026, 2, 10, 23, 59, 59, 999), 'svc-fast', 'Classify: I love it.');
    await run(Date.UTC(2026, 2, 11, 0, 0, 0, 0), 'svc-code', 'Fix this bug: for i in range(10) print(i)');
    await run(Date.UTC(2026, 2, 11, 18), 'svc-fast', 'Translate to French: good morning.');
  });

  it('the requests fell on the expected days', () => {
    expect(calls.map((c) => c.day)).toEqual([DAY1, DAY1, DAY1, DAY2, DAY2]);
  });

  it('reports totals, per-model and per-day breakdowns over an explicit period', async () => {
    clock.set(Date.UTC(2026, 2, 11, 20));
    const u = await usage(acct.secret, `?start_date=${DAY1}&end_date=${DAY2}`);
    const all = sum(calls);
    expect(u).toEqual({
      object: 'usage',
      account_id: acct.accountId,
      environment: 'live',
      model: null,
      period_start: '2026-03-10T00:00:00Z',
      period_end: '2026-03-11T23:59:59Z',
      total_requests: 5,
      total_prompt_tokens: all.prompt_tokens,
      total_completion_tokens: all.completion_tokens,
      total_credits_spent: all.credits,
      total_credits: all.credits,
      breakdown_by_model: {
        'svc-code': sum(calls.filter((c) => c.model === 'svc-code')),
        'svc-fast': sum(calls.filter((c) => c.model === 'svc-fast')),
      },
      breakdown_by_day: [
        { date: DAY1, ...sum(calls.filter((c) => c.day === DAY1)) },
        { date: DAY2, ...sum(calls.filter((c) => c.day === DAY2)) },
      ],
    });
    expect(u.breakdown_by_model['svc-fast']?.requests).toBe(3);
    expect(u.breakdown_by_model['svc-code']?.requests).toBe(2);
    expect(u.breakdown_by_day.map((d) => d.requests)).toEqual([3, 2]);
  });

  it('usage credits equal the balance decrease exactly', async () => {
    const b = await gw.store.ledger.balance(acct.accountId, 'live');
    const u = await usage(acct.secret, `?start_date=${DAY1}&end_date=${DAY2}`);
    expect(u.total_credits).toBe(before - (b.earned + b.purchased));
    expect(b.reserved).toBe(0);
    const c = await credits(acct.secret);
    expect(c.total_credits).toBe(before - u.total_credits);
  });

  it('a single day', async () => {
    const u = await usage(acct.secret, `?start_date=${DAY2}&end_date=${DAY2}`);
    const day2 = sum(calls.filter((c) => c.day === DAY2));
    expect(u).toMatchObject({
      period_start: '2026-03-11T00:00:00Z',
      period_end: '2026-03-11T23:59:59Z',
      total_requests: 2,
      total_credits: day2.credits,
      breakdown_by_day: [{ date: DAY2, ...day2 }],
    });
    expect(Object.keys(u.breakdown_by_model).sort()).toEqual(['svc-code', 'svc-fast']);
  });

  it('filters by model', async () => {
    const u = await usage(acct.secret, `?start_date=${DAY1}&end_date=${DAY2}&model=svc-code`);
    const code = calls.filter((c) => c.model === 'svc-code');
    expect(u).toMatchObject({
      model: 'svc-code',
      total_requests: 2,
      total_prompt_tokens: sum(code).prompt_tokens,
      total_completion_tokens: sum(code).completion_tokens,
      total_credits: sum(code).credits,
      breakdown_by_model: { 'svc-code': sum(code) },
      breakdown_by_day: [
        { date: DAY1, ...sum(code.filter((c) => c.day === DAY1)) },
        { date: DAY2, ...sum(code.filter((c) => c.day === DAY2)) },
      ],
    });
    expect(Object.keys(u.breakdown_by_model)).toEqual(['svc-code']);
    const none = await usage(acct.secret, `?start_date=${DAY1}&end_date=${DAY2}&model=svc-smart`);
    expect(none).toMatchObject({
      model: 'svc-smart',
      total_requests: 0,
      total_prompt_tokens: 0,
      total_completion_tokens: 0,
      total_credits: 0,
      breakdown_by_model: {},
      breakdown_by_day: [],
    });
  });

  it('defaults to the last 30 days including today', async () => {
    clock.set(Date.UTC(2026, 2, 11, 20));
    let u = await usage(acct.secret);
    expect(u.period_start).toBe('2026-02-10T00:00:00Z');
    expect(u.period_end).toBe('2026-03-11T23:59:59Z');
    expect(u.total_requests).toBe(5);

    // 2026-04-09: the window is 2026-03-11..2026-04-09, so day 1 has left it.
    clock.set(Date.UTC(2026, 3, 9, 0, 30));
    u = await usage(acct.secret);
    expect(u.period_start).toBe('2026-03-11T00:00:00Z');
    expect(u.period_end).toBe('2026-04-09T23:59:59Z');
    expect(u.total_requests).toBe(2);
    expect(u.breakdown_by_day.map((d) => d.date)).toEqual([DAY2]);
    expect(u.total_credits).toBe(sum(calls.filter((c) => c.day === DAY2)).credits);

    // One day later nothing is left in the window.
    clock.set(Date.UTC(2026, 3, 10, 12));
    u = await usage(acct.secret);
    expect(u.period_start).toBe('2026-03-12T00:00:00Z');
    expect(u).toMatchObject({ total_requests: 0, total_credits: 0, breakdown_by_model: {}, breakdown_by_day: [] });
  });

  it('with only start_date the period runs to today; with only end_date it is the 30 days ending then', async () => {
    clock.set(Date.UTC(2026, 3, 10, 12));
    let u = await usage(acct.secret, `?start_date=${DAY2}`);
    expect(u.period_start).toBe('2026-03-11T00:00:00Z');
    expect(u.period_end).toBe('2026-04-10T23:59:59Z');
    expect(u.total_requests).toBe(2);
    u = await usage(acct.secret, `?end_date=${DAY1}`);
    expect(u.period_start).toBe('2026-02-09T00:00:00Z');
    expect(u.period_end).toBe('2026-03-10T23:59:59Z');
    expect(u.total_requests).toBe(3);
  });

  it('a period of exactly 366 days is accepted', async () => {
    const u = await usage(acct.secret, '?start_date=2025-03-11&end_date=2026-03-11');
    expect(u.total_requests).toBe(5);
  });

  it("another account's usage is not included", async () => {
    clock.set(Date.UTC(2026, 2, 10, 10));
    const other = await gw.seed({ purchased: 1_000 });
    await complete(other.secret, 'svc-fast', 'hello');
    const mine = await usage(acct.secret, `?start_date=${DAY1}&end_date=${DAY2}`);
    expect(mine.total_requests).toBe(5);
    const theirs = await usage(other.secret, `?start_date=${DAY1}&end_date=${DAY2}`);
    expect(theirs.total_requests).toBe(1);
  });
});
