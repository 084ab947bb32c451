/**
 * Circuit breakers with real HTTP upstreams: a primary that stops answering costs its first-token deadline
 * only until its breaker opens; then requests go straight to the secondary; once the primary recovers, one
 * probe closes the breaker and traffic returns to it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/schema.js';
import { startSandboxServer, type SandboxServer } from '../../src/runtime/node/sandbox-server.js';
import { chat, startTestGateway, type Seeded, type TestGateway } from '../helpers/gateway.js';

const FIRST_TOKEN_MS = 300;
const OPEN_MS = 800;
const ADMIN = 'admin-token-for-the-circuit-breaker-tests';

let primary: SandboxServer;
let secondary: SandboxServer;
let gw: TestGateway;
let seeded: Seeded;

beforeAll(async () => {
  const instant = { timeToFirstTokenMs: 0, tokensPerSecond: 0 };
  primary = await startSandboxServer({ port: 0, pace: instant });
  secondary = await startSandboxServer({ port: 0, pace: instant });
  const targets = [
    { provider: 'primary', model: 'm' },
    { provider: 'secondary', model: 'm' },
  ];
  const config = parseConfig({
    health: { failure_threshold: 2, open_ms: OPEN_MS, max_open_ms: 10 * OPEN_MS },
    providers: {
      primary: { type: 'openai-compatible', base_url: primary.url, paid: false, timeouts: { first_token_ms: FIRST_TOKEN_MS } },
      secondary: { type: 'openai-compatible', base_url: secondary.url, paid: false },
    },
    aliases: { 'svc-fast': { targets }, 'svc-code': { targets }, 'svc-smart': { targets } },
  });
  gw = await startTestGateway({ config, adminToken: ADMIN });
  seeded = await gw.seed({ purchased: 1_000_000 });
});
afterAll(async () => {
  await gw.close();
  await primary.close();
  await secondary.close();
});

interface Svc {
  routed_provider: string;
  attempts?: { provider: string; outcome: string }[];
}

async function ask(stream: boolean): Promise<{ svc: Svc; ms: number }> {
  const started = Date.now();
  const res = await chat(gw, seeded.secret, {
    model: 'svc-fast',
    messages: [{ role: 'user', content: 'Classify: "great product" -> positive or negative?' }],
    max_tokens: 50,
    stream,
  });
  expect(res.status).toBe(200);
  const raw = await res.text();
  const svc = stream
    ? (JSON.parse(
        raw
          .split('\n\n')
          .filter((b) => b.startsWith('data: {') && b.includes('"svc"'))
          .at(-1)
          ?.slice(6) ?? 'null',
      ) as { svc: Svc }).svc
    : (JSON.parse(raw) as { svc: Svc }).svc;
  return { svc, ms: Date.now() - started };
}

async function primaryState(): Promise<string> {
  return targetState('primary/m');
}

async function targetState(target: string): Promise<string> {
  const res = await fetch(`${gw.url.replace(/\/v1$/, '/admin/v1')}/health`, { headers: { authorization: `Bearer ${ADMIN}` } });
  const body = (await res.json()) as { data: { target: string; state: string }[] };
  return body.data.find((t) => t.target === target)?.state ?? 'missing';
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('circuit breaker', () => {
  it('opens on a dead primary, skips it without paying its deadline, and closes when it recovers', async () => {
    primary.setFault({ type: 'stall_before_first_token', headers: true });
    // Two failures open the breaker; each pays the first-token deadline once.
    for (const stream of [true, false]) {
      const { svc, ms } = await ask(stream);
      expect(svc.routed_provider).toBe('secondary');
      expect(svc.attempts?.map((a) => a.outcome)).toEqual(['timeout', 'ok']);
      expect(ms).toBeGreaterThanOrEqual(FIRST_TOKEN_MS);
    }
    expect(await primaryState()).toBe('open');

    const callsBefore = primary.stats().requests;
    for (const stream of [true, false, true]) {
      const { svc, ms } = await ask(stream);
      expect(svc.routed_provider).toBe('secondary');
      expect(svc.attempts).toBeUndefined();
      expect(ms).toBeLessThan(FIRST_TOKEN_MS);
    }
    expect(primary.stats().requests).toBe(callsBefore);

    // Recovered, and the open period is over: the next request probes it and traffic comes back.
    primary.setFault(null);
    await sleep(OPEN_MS + 50);
    const probe = await ask(false);
    expect(probe.svc.routed_provider).toBe('primary');
    expect(await primaryState()).toBe('closed');
    expect((await ask(true)).svc.routed_provider).toBe('primary');
  });

  it('a failed probe opens the breaker again, for longer', async () => {
    primary.setFault({ type: 'status', status: 503 });
    // Closed after the previous test: two failures open it again.
    await ask(false);
    await ask(false);
    expect(await primaryState()).toBe('open');
    await sleep(OPEN_MS + 50);
    const callsBefore = primary.stats().requests;
    const probe = await ask(false);
    expect(probe.svc.attempts?.map((a) => a.outcome)).toEqual(['http_503', 'ok']);
    expect(primary.stats().requests).toBe(callsBefore + 1);
    expect(await primaryState()).toBe('open');
    // Doubled: still open after one more base period.
    await sleep(OPEN_MS + 50);
    await ask(false);
    expect(primary.stats().requests).toBe(callsBefore + 1);
    primary.setFault(null);
  });

  it('tries an open target rather than fail a request that tried nothing', async () => {
    primary.setFault({ type: 'status', status: 503 });
    secondary.setFault({ type: 'status', status: 503 });
    for (let i = 0; i < 2; i++) {
      const res = await chat(gw, seeded.secret, { model: 'svc-fast', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 });
      expect(res.status).toBe(503);
      await res.text();
    }
    expect(await targetState('primary/m')).toBe('open');
    expect(await targetState('secondary/m')).toBe('open');
    // Both upstreams recover while their breakers are still open: the next request still reaches one.
    primary.setFault(null);
    secondary.setFault(null);
    const { svc } = await ask(false);
    expect(['primary', 'secondary']).toContain(svc.routed_provider);
  });
});
