/**
 * svc-auto through the real server: the `svc` metadata names the chosen tier (with confidence and reason)
 * and the upstream model that served it, for plain and streamed answers; the `x-svc-quality-bias` header
 * moves the decision per request, and a malformed one is refused in the OpenAI error envelope.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chat, instantSandboxConfig, sseData, startTestGateway, type Seeded, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
let seeded: Seeded;

beforeAll(async () => {
  gw = await startTestGateway();
  seeded = await gw.seed({ purchased: 1_000_000 });
});
afterAll(() => gw.close());

interface Svc {
  requested_model: string;
  routed_model: string;
  routing?: { tier: string; confidence: number; reason: string };
}

async function auto(content: string, headers: Record<string, string> = {}): Promise<Svc> {
  const r = await chat(gw, seeded.secret, { model: 'svc-auto', messages: [{ role: 'user', content }], max_tokens: 16 }, {
    headers: { authorization: `Bearer ${seeded.secret}`, 'content-type': 'application/json', ...headers },
  });
  expect(r.status).toBe(200);
  return ((await r.json()) as { svc: Svc }).svc;
}

describe('svc-auto over HTTP', () => {
  it.each([
    ['fast', 'Translate to German: good evening, everyone.'],
    ['code', 'Write a Rust function that returns the largest element of a slice.'],
    ['smart', 'Prove that there are infinitely many primes.'],
  ])('routes to %s and says so in svc', async (tier, prompt) => {
    const svc = await auto(prompt);
    expect(svc.requested_model).toBe('svc-auto');
    expect(svc.routing?.tier).toBe(tier);
    expect(svc.routing?.confidence).toBeGreaterThan(0.34);
    expect(svc.routing?.confidence).toBeLessThanOrEqual(1);
    expect(svc.routing?.reason).toMatch(/\w/);
    expect(svc.routed_model).toBe(`sandbox/sandbox-${tier}`);
  });

  it('reports the routing in the svc chunk of a stream', async () => {
    const r = await chat(gw, seeded.secret, {
      model: 'svc-auto',
      messages: [{ role: 'user', content: 'Solve for x: 3x + 7 = 22.' }],
      stream: true,
      max_tokens: 16,
    });
    const events = sseData(await r.text());
    const last = JSON.parse(events[events.length - 2] as string) as { svc: Svc };
    expect(last.svc.routing?.tier).toBe('smart');
    expect(last.svc.routed_model).toBe('sandbox/sandbox-smart');
  });

  it('lets a request lower the dial with x-svc-quality-bias, never raise it above the operator\'s', async () => {
    const unsure = 'What are the pros and cons of nuclear power?';
    const cheap = await auto(unsure, { 'x-svc-quality-bias': '0' });
    const asConfigured = await auto(unsure, {});
    const raised = await auto(unsure, { 'x-svc-quality-bias': '1' });
    expect(cheap.routing?.tier).toBe('fast');
    expect(cheap.routed_model).toBe('sandbox/sandbox-fast');
    // svc-auto's price is fixed: a client asking for more capability than the operator allows gets the
    // operator's choice, not svc-smart at svc-auto's price.
    expect(raised.routing?.tier).toBe(asConfigured.routing?.tier);
    expect(raised.routed_model).toBe(asConfigured.routed_model);
    expect(raised.routing?.tier).not.toBe('smart');
  });

  it('serves svc-smart for a bias of 1 when the operator set 1', async () => {
    const generous = await startTestGateway({ config: { ...instantSandboxConfig(), aliases: { ...instantSandboxConfig().aliases, 'svc-auto': { quality_bias: 1 } } } });
    try {
      const s = await generous.seed({ purchased: 10_000 });
      const res = await chat(generous, s.secret, { model: 'svc-auto', messages: [{ role: 'user', content: 'What are the pros and cons of nuclear power?' }], max_tokens: 8 }, {
        headers: { authorization: `Bearer ${s.secret}`, 'content-type': 'application/json', 'x-svc-quality-bias': '1' },
      });
      expect(((await res.json()) as { svc: Svc }).svc.routing?.tier).toBe('smart');
    } finally {
      await generous.close();
    }
  });

  it.each(['1.5', '-0.1', 'high', '', '0x1', '1e-1'])('refuses x-svc-quality-bias: %j', async (value) => {
    const r = await chat(gw, seeded.secret, { model: 'svc-auto', messages: [{ role: 'user', content: 'hi' }] }, {
      headers: { authorization: `Bearer ${seeded.secret}`, 'content-type': 'application/json', 'x-svc-quality-bias': value },
    });
    expect(r.status).toBe(400);
    expect(await r.json()).toEqual({
      error: {
        type: 'invalid_request_error',
        code: 'invalid_value',
        param: 'x-svc-quality-bias',
        message: expect.stringContaining('x-svc-quality-bias'),
      },
    });
  });
});
