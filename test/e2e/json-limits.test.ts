/**
 * JSON depth and size limits on request bodies, against the real server: a body nested past the limit (in
 * tool parameters, in a response_format schema, at the top) or with an oversized array or object is refused
 * with 400 naming the limit, on every JSON endpoint, never a 500; bodies within the limits pass.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_JSON_ARRAY_LENGTH, MAX_JSON_DEPTH, MAX_JSON_OBJECT_MEMBERS } from '../../src/http/json-body.js';
import { startTestGateway, type Seeded, type TestGateway } from '../helpers/gateway.js';

const ADMIN = 'admin-token-for-the-json-limits-test-0123456789';
let gw: TestGateway;
let seeded: Seeded;

beforeAll(async () => {
  gw = await startTestGateway({ adminToken: ADMIN });
  seeded = await gw.seed({ purchased: 1_000_000 });
});
afterAll(() => gw.close());

/** A JSON Schema of `levels` objects, each the only property of the one above. */
function nestedSchema(levels: number): Record<string, unknown> {
  let schema: Record<string, unknown> = { type: 'string' };
  for (let i = 0; i < levels; i++) schema = { type: 'object', properties: { inner: schema } };
  return schema;
}

/** `{"a":{"a":...}}`, `levels` objects deep, as text (a 10,000-level value cannot go through JSON.stringify). */
function nestedText(levels: number): string {
  return '{"a":'.repeat(levels - 1) + '{}' + '}'.repeat(levels - 1);
}

const withTool = (parameters: string): string =>
  `{"model":"svc-fast","max_tokens":5,"messages":[{"role":"user","content":"hi"}],` +
  `"tools":[{"type":"function","function":{"name":"f","parameters":${parameters}}}]}`;

async function post(path: string, raw: string, auth = `Bearer ${seeded.secret}`): Promise<Response> {
  return fetch(`${gw.url}${path}`, { method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' }, body: raw });
}

async function expectRefused(res: Response, code: string, limit: number): Promise<void> {
  expect(res.status).toBe(400);
  const { error } = (await res.json()) as { error: { type: string; code: string; message: string } };
  expect(error.type).toBe('invalid_request_error');
  expect(error.code).toBe(code);
  expect(error.message).toContain(String(limit));
}

describe('JSON depth', () => {
  it('serves a tool whose parameters nest 12 objects deep (the body is 29 levels deep)', async () => {
    const res = await post('/chat/completions', withTool(JSON.stringify(nestedSchema(12))));
    expect(res.status).toBe(200);
  });

  it.each([50, 10_000, 1_000_000])('refuses tool parameters %i levels deep with 400 json_too_deep', async (levels) => {
    const res = await post('/chat/completions', withTool(nestedText(levels)));
    await expectRefused(res, 'json_too_deep', MAX_JSON_DEPTH);
  });

  it('names where the body went too deep', async () => {
    const res = await post('/chat/completions', withTool(nestedText(50)));
    const { error } = (await res.json()) as { error: { message: string; param: string | null } };
    expect(error.param).toBe('tools');
    expect(error.message).toContain('tools[0].function.parameters.a.a');
  });

  it('refuses a body nested one level past the limit, and lets one at the limit through to validation', async () => {
    // The body object is level 1. `x` is an unknown field, so the body at the limit meets the endpoint's own
    // validation (a 400 of another code): the point is that the depth check let it through.
    const at = `{"name":"k","x":${nestedText(MAX_JSON_DEPTH - 1)}}`;
    const past = `{"name":"k","x":${nestedText(MAX_JSON_DEPTH)}}`;
    const atRes = await post('/api-keys', at);
    expect(atRes.status).toBe(400);
    expect(((await atRes.json()) as { error: { code: string } }).error.code).not.toBe('json_too_deep');
    await expectRefused(await post('/api-keys', past), 'json_too_deep', MAX_JSON_DEPTH);
  });

  it('refuses deep JSON on the admin API too', async () => {
    const res = await fetch(`${gw.url.replace(/\/v1$/, '')}/admin/v1/accounts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: `{"name":${nestedText(10_000)}}`,
    });
    await expectRefused(res, 'json_too_deep', MAX_JSON_DEPTH);
  });
});

describe('JSON sizes', () => {
  it('refuses an array longer than the limit', async () => {
    const messages = `[${Array.from({ length: MAX_JSON_ARRAY_LENGTH + 1 }, () => '{}').join(',')}]`;
    const res = await post('/chat/completions', `{"model":"svc-fast","messages":${messages}}`);
    await expectRefused(res, 'json_array_too_long', MAX_JSON_ARRAY_LENGTH);
  });

  it('refuses an object with more members than the limit', async () => {
    const members = Array.from({ length: MAX_JSON_OBJECT_MEMBERS + 1 }, (_, i) => `"k${i}":1`).join(',');
    const res = await post('/chat/completions', withTool(`{${members}}`));
    await expectRefused(res, 'json_object_too_large', MAX_JSON_OBJECT_MEMBERS);
  });

});
