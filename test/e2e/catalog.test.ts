/** The public catalog over HTTP: exactly the four aliases, their context windows, prices and descriptions. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type Seeded, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
let seeded: Seeded;

beforeAll(async () => {
  gw = await startTestGateway();
  seeded = await gw.seed({ purchased: 10 });
});
afterAll(() => gw.close());

const get = (path: string, secret = seeded.secret): Promise<Response> =>
  fetch(`${gw.url}${path}`, { headers: { authorization: `Bearer ${secret}` } });

const CREATED = Date.UTC(2026, 0, 1) / 1000;

const EXPECTED = [
  {
    id: 'svc-auto',
    name: 'SVC Auto',
    context_window: 128_000,
    pricing: { input_credits_per_1k: 10, output_credits_per_1k: 30 },
    description: 'Automatic cost and intelligence optimization by prompt complexity.',
  },
  {
    id: 'svc-fast',
    name: 'SVC Fast',
    context_window: 64_000,
    pricing: { input_credits_per_1k: 4, output_credits_per_1k: 12 },
    description: 'Low latency: autocomplete, classification, summarization.',
  },
  {
    id: 'svc-code',
    name: 'SVC Code',
    context_window: 128_000,
    pricing: { input_credits_per_1k: 12, output_credits_per_1k: 40 },
    description: 'Code generation, debugging, multi-file reasoning.',
  },
  {
    id: 'svc-smart',
    name: 'SVC Smart',
    context_window: 128_000,
    pricing: { input_credits_per_1k: 25, output_credits_per_1k: 75 },
    description: 'Complex reasoning, math, multi-step planning.',
  },
].map((m) => ({ ...m, object: 'model', created: CREATED, owned_by: 'svc-gateway' }));

describe('GET /v1/models', () => {
  it('lists exactly the four aliases with context windows, prices and descriptions', async () => {
    const res = await get('/models');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    const body = (await res.json()) as { object: string; data: Record<string, unknown>[] };
    expect(Object.keys(body).sort()).toEqual(['data', 'object']);
    expect(body.object).toBe('list');
    expect(body.data).toEqual(EXPECTED);
  });

  it('prices are positive integers and output costs more than input', async () => {
    const body = (await (await get('/models')).json()) as { data: typeof EXPECTED };
    for (const m of body.data) {
      expect(Number.isInteger(m.pricing.input_credits_per_1k)).toBe(true);
      expect(Number.isInteger(m.pricing.output_credits_per_1k)).toBe(true);
      expect(m.pricing.input_credits_per_1k).toBeGreaterThan(0);
      expect(m.pricing.output_credits_per_1k).toBeGreaterThan(m.pricing.input_credits_per_1k);
    }
  });

  it('is the same for a test key', async () => {
    const t = await gw.seed({ environment: 'test' });
    expect(await (await get('/models', t.secret)).json()).toEqual({ object: 'list', data: EXPECTED });
  });

  it('needs a key', async () => {
    const res = await fetch(`${gw.url}/models`);
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('missing_api_key');
  });
});

describe('GET /v1/models/:id', () => {
  for (const m of EXPECTED) {
    it(`returns ${m.id}`, async () => {
      const res = await get(`/models/${m.id}`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual(m);
    });
  }

  it('svc-fast has the 64k window and 4/12 prices', async () => {
    const m = (await (await get('/models/svc-fast')).json()) as Record<string, unknown>;
    expect(m).toMatchObject({ id: 'svc-fast', object: 'model', context_window: 64_000, pricing: { input_credits_per_1k: 4, output_credits_per_1k: 12 } });
  });

  for (const id of ['nope', 'gpt-4o', 'SVC-FAST', 'svc-fast ', 'toString', '__proto__', 'constructor']) {
    it(`'${id}' -> 404 model_not_found`, async () => {
      const res = await get(`/models/${encodeURIComponent(id)}`);
      const body = (await res.json()) as { error: Record<string, unknown> };
      expect(res.status, JSON.stringify(body)).toBe(404);
      expect(body).toEqual({
        error: { message: expect.stringMatching(/.+/) as unknown, type: 'not_found_error', param: 'model', code: 'model_not_found' },
      });
      expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    });
  }
});
