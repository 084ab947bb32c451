/**
 * Upstream failures with real HTTP upstreams: two sandbox servers as primary and secondary. Failover
 * before the first byte, clean errors when every target fails, and the charge on every path. Mid-stream
 * failures and deadlines are in fault-matrix.test.ts.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/schema.js';
import { startSandboxServer, type SandboxServer } from '../../src/runtime/node/sandbox-server.js';
import { chat, sseData, startTestGateway, type Seeded, type TestGateway } from '../helpers/gateway.js';

let primary: SandboxServer;
let secondary: SandboxServer;
let gw: TestGateway;
let seeded: Seeded;
const fast = { timeToFirstTokenMs: 0, tokensPerSecond: 0 };

beforeAll(async () => {
  primary = await startSandboxServer({ port: 0, pace: fast });
  secondary = await startSandboxServer({ port: 0, pace: fast });
  const targets = [
    { provider: 'primary', model: 'm-primary' },
    { provider: 'secondary', model: 'm-secondary' },
  ];
  const config = parseConfig({
    // Each case must meet the failing primary; breakers are tested in circuit-breaker.test.ts.
    health: { failure_threshold: 1_000 },
    providers: {
      primary: { type: 'openai-compatible', base_url: primary.url, paid: false },
      secondary: { type: 'openai-compatible', base_url: secondary.url, paid: false },
    },
    aliases: { 'svc-fast': { targets }, 'svc-code': { targets }, 'svc-smart': { targets } },
  });
  gw = await startTestGateway({ config });
  seeded = await gw.seed({ purchased: 100_000 });
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

const body = (stream: boolean) => ({
  model: 'svc-fast',
  messages: [{ role: 'user', content: 'Extract the city: I live in Lyon.' }],
  max_tokens: 30,
  stream,
});

async function balance(): Promise<number> {
  return (await gw.store.ledger.balance(seeded.accountId, 'live')).purchased;
}

interface Svc {
  routed_provider: string;
  routed_model: string;
  credits_used: number;
  attempts?: { provider: string; outcome: string }[];
}

describe.each([false, true])('stream=%s', (stream) => {
  async function svcOf(res: Response): Promise<Svc> {
    if (!stream) return ((await res.json()) as { svc: Svc }).svc;
    const data = sseData(await res.text());
    expect(data.at(-1)).toBe('[DONE]');
    return (JSON.parse(data.at(-2) as string) as { svc: Svc }).svc;
  }

  it.each([
    ['a 500', { type: 'status', status: 500 }, 'http_500'],
    ['a 429', { type: 'status', status: 429 }, 'http_429'],
    ['a connection reset', { type: 'reset' }, 'connect'],
  ] as const)('fails over from %s on the primary to the secondary, charged once', async (_name, fault, outcome) => {
    primary.setFault(fault);
    const before = await balance();
    const res = await chat(gw, seeded.secret, body(stream));
    expect(res.status).toBe(200);
    const svc = await svcOf(res);
    expect(svc.routed_provider).toBe('secondary');
    expect(svc.routed_model).toBe('secondary/m-secondary');
    expect(svc.attempts?.map((a) => a.outcome)).toEqual([outcome, 'ok']);
    expect(await balance()).toBe(before - svc.credits_used);
    expect(await gw.store.ledger.countPendingHolds()).toBe(0);
  });

  it.each([
    [500, 502, 'upstream_error'],
    [503, 503, 'upstream_unavailable'],
  ])('answers a clean error when both answer %i, and charges nothing', async (status, expected, code) => {
    primary.setFault({ type: 'status', status });
    secondary.setFault({ type: 'status', status });
    const before = await balance();
    const res = await chat(gw, seeded.secret, body(stream));
    expect(res.status).toBe(expected);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe(code);
    expect(await balance()).toBe(before);
    expect(await gw.store.ledger.countPendingHolds()).toBe(0);
  });

  it('does not fail over on an upstream 400: the request itself is at fault', async () => {
    primary.setFault({ type: 'status', status: 400, message: 'bad parameter' });
    const before = await balance();
    const secondaryCalls = secondary.stats().requests;
    const res = await chat(gw, seeded.secret, body(stream));
    expect(res.status).toBe(400);
    const err = ((await res.json()) as { error: { code: string; message: string } }).error;
    expect(err.code).toBe('upstream_rejected_request');
    expect(err.message).toContain('bad parameter');
    expect(secondary.stats().requests).toBe(secondaryCalls);
    expect(await balance()).toBe(before);
  });
});
