/**
 * The API-key lifecycle over HTTP: create, list, revoke; isolation between accounts and between the
 * live and test environments; and the escalation rules (a key never creates or revokes a stronger key).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, parseConfig } from '../../src/config/schema.js';
import { createApiKey } from '../../src/keys/key-service.js';
import { chat, startTestGateway, type Seeded, type TestGateway } from '../helpers/gateway.js';

interface KeyView {
  id: string;
  object: string;
  name: string | null;
  environment: 'live' | 'test';
  redacted_key: string;
  daily_credit_limit: number | null;
  created_at: number;
  revoked_at: number | null;
}
interface Created extends KeyView {
  secret: string;
}
interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string };
}

let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(() => gw.close());

function call(secret: string, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${gw.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

async function create(secret: string, body: Record<string, unknown> = {}): Promise<Created> {
  const res = await call(secret, 'POST', '/api-keys', body);
  const json = (await res.json()) as Created;
  expect(res.status, JSON.stringify(json)).toBe(201);
  return json;
}

async function list(secret: string): Promise<KeyView[]> {
  const res = await call(secret, 'GET', '/api-keys');
  expect(res.status).toBe(200);
  const json = (await res.json()) as { object: string; data: KeyView[] };
  expect(json.object).toBe('list');
  return json.data;
}

async function expectError(res: Response, status: number, code: string, param?: string | null): Promise<ErrorBody> {
  const body = (await res.json()) as ErrorBody;
  expect({ status: res.status, code: body.error.code }, JSON.stringify(body)).toEqual({ status, code });
  if (param !== undefined) expect(body.error.param).toBe(param);
  expect(res.headers.get('x-request-id')).toBeTruthy();
  return body;
}

/** A request any valid key may make, to check a key works. */
const credits = (secret: string): Promise<Response> => call(secret, 'GET', '/credits');

describe('lifecycle', () => {
  let owner: Seeded;
  beforeAll(async () => {
    owner = await gw.seed({ purchased: 10_000 });
  });

  it('POST creates a live key whose secret works right away', async () => {
    const k = await create(owner.secret, { name: 'ci runner' });
    expect(k.secret).toMatch(/^svc_live_[0-9A-Za-z]{40}$/);
    expect(k).toMatchObject({ object: 'api_key', name: 'ci runner', environment: 'live', daily_credit_limit: null, revoked_at: null });
    expect(k.id).toMatch(/^key_[0-9A-Za-z]{12}$/);
    expect(k.secret.slice(9, 21)).toBe(k.id.slice(4));
    expect(typeof k.created_at).toBe('number');
    const res = await credits(k.secret);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ account_id: owner.accountId, environment: 'live', total_credits: 10_000 });
    const completion = await chat(gw, k.secret, { model: 'svc-fast', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 });
    expect(completion.status).toBe(200);
  });

  it('POST with environment test creates a svc_test_ key', async () => {
    const k = await create(owner.secret, { environment: 'test' });
    expect(k.secret).toMatch(/^svc_test_[0-9A-Za-z]{40}$/);
    expect(k.environment).toBe('test');
    expect((await credits(k.secret)).status).toBe(200);
  });

  it('GET lists keys without their secrets; redacted_key shows only the start and end', async () => {
    const k = await create(owner.secret, { name: 'listed' });
    const keys = await list(owner.secret);
    const mine = keys.find((x) => x.id === k.id);
    expect(mine).toBeDefined();
    const { secret, ...view } = k;
    expect(mine).toEqual(view);
    // No field of any listed key holds the secret, nor its hidden middle (the random part).
    const hidden = secret.slice(13, -4);
    for (const listed of keys) {
      for (const value of Object.values(listed)) {
        expect(String(value)).not.toContain(secret);
        expect(String(value)).not.toContain(hidden);
      }
      expect(Object.keys(listed).sort()).toEqual(
        ['created_at', 'daily_credit_limit', 'environment', 'id', 'name', 'object', 'parent_key_id', 'redacted_key', 'revoked_at', 'rpm_limit', 'tpm_limit'],
      );
    }
    const [head, tail] = mine!.redacted_key.split('...');
    expect(head).toMatch(/^svc_live_/);
    expect(secret.startsWith(head!)).toBe(true);
    expect(secret.endsWith(tail!)).toBe(true);
    expect(tail!.length).toBeGreaterThan(0);
    expect(head!.length - 'svc_live_'.length + tail!.length).toBeLessThanOrEqual(8);
  });

  it('DELETE revokes: the next request gets 401 revoked_api_key, the key leaves the list, a second DELETE is 404', async () => {
    const k = await create(owner.secret, { name: 'doomed' });
    expect((await credits(k.secret)).status).toBe(200);
    const del = await call(owner.secret, 'DELETE', `/api-keys/${k.id}`);
    expect(del.status).toBe(200);
    const deleted = (await del.json()) as KeyView & { deleted: boolean };
    expect(deleted).toMatchObject({ id: k.id, deleted: true });
    expect(typeof deleted.revoked_at).toBe('number');
    await expectError(await credits(k.secret), 401, 'revoked_api_key');
    await expectError(await chat(gw, k.secret, { model: 'svc-fast', messages: [{ role: 'user', content: 'hi' }] }), 401, 'revoked_api_key');
    expect((await list(owner.secret)).map((x) => x.id)).not.toContain(k.id);
    await expectError(await call(owner.secret, 'DELETE', `/api-keys/${k.id}`), 404, 'api_key_not_found', 'id');
    // The revoking key itself is untouched.
    expect((await credits(owner.secret)).status).toBe(200);
  });

  it('a key may revoke itself', async () => {
    const k = await create(owner.secret, { name: 'self' });
    const del = await call(k.secret, 'DELETE', `/api-keys/${k.id}`);
    expect(del.status).toBe(200);
    await expectError(await credits(k.secret), 401, 'revoked_api_key');
    expect((await list(owner.secret)).map((x) => x.id)).not.toContain(k.id);
  });

  it('a capped key may revoke itself', async () => {
    const k = await create(owner.secret, { daily_credit_limit: 10 });
    expect((await call(k.secret, 'DELETE', `/api-keys/${k.id}`)).status).toBe(200);
    await expectError(await credits(k.secret), 401, 'revoked_api_key');
  });

  it('CLI-created keys (seed) are listed, usable, and revocable through the API', async () => {
    const acct = await gw.seed({ purchased: 100 });
    const keys = await list(acct.secret);
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({ id: acct.keyId, name: 'seed', environment: 'live', daily_credit_limit: null, revoked_at: null });
    expect(acct.secret.startsWith(keys[0]!.redacted_key.split('...')[0]!)).toBe(true);
    const apiKey = await create(acct.secret, { name: 'made by api' });
    expect((await list(apiKey.secret)).map((k) => k.id).sort()).toEqual([acct.keyId, apiKey.id].sort());
    expect((await call(apiKey.secret, 'DELETE', `/api-keys/${acct.keyId}`)).status).toBe(200);
    await expectError(await credits(acct.secret), 401, 'revoked_api_key');
    expect((await list(apiKey.secret)).map((k) => k.id)).toEqual([apiKey.id]);
  });
});

describe('cross-account isolation', () => {
  it("B's key id answers 404 to A, and B's keys never appear in A's list", async () => {
    const a = await gw.seed({ purchased: 100 });
    const b = await gw.seed({ purchased: 100 });
    const bExtra = await create(b.secret, { name: 'b extra' });
    const bTest = await create(b.secret, { environment: 'test' });
    for (const id of [b.keyId, bExtra.id, bTest.id]) {
      const body = await expectError(await call(a.secret, 'DELETE', `/api-keys/${id}`), 404, 'api_key_not_found', 'id');
      expect(body.error.type).toBe('not_found_error');
    }
    // The same answer as for a key that does not exist at all.
    await expectError(await call(a.secret, 'DELETE', '/api-keys/key_zzzzzzzzzzzz'), 404, 'api_key_not_found', 'id');
    // B's keys still work.
    for (const s of [b.secret, bExtra.secret, bTest.secret]) expect((await credits(s)).status).toBe(200);
    const aIds = (await list(a.secret)).map((k) => k.id);
    expect(aIds).toEqual([a.keyId]);
    const bIds = (await list(b.secret)).map((k) => k.id);
    expect(bIds.sort()).toEqual([b.keyId, bExtra.id, bTest.id].sort());
    expect(bIds).not.toContain(a.keyId);
  });
});

describe('escalation', () => {
  it('a capped key cannot create an uncapped key or one with a higher cap (403 key_escalation)', async () => {
    const capped = await gw.seed({ purchased: 100, dailyCreditLimit: 100 });
    let body = await expectError(
      await call(capped.secret, 'POST', '/api-keys', { daily_credit_limit: null }),
      403,
      'key_escalation',
      'daily_credit_limit',
    );
    expect(body.error.type).toBe('permission_error');
    body = await expectError(await call(capped.secret, 'POST', '/api-keys', { daily_credit_limit: 101 }), 403, 'key_escalation', 'daily_credit_limit');
    expect(body.error.message.length).toBeGreaterThan(0);
    expect(await list(capped.secret)).toHaveLength(1);
  });

  it('a capped key may create a key with a lower or equal cap; without a cap it inherits its own', async () => {
    const capped = await gw.seed({ purchased: 100, dailyCreditLimit: 100 });
    const lower = await create(capped.secret, { daily_credit_limit: 40 });
    expect(lower.daily_credit_limit).toBe(40);
    expect((await credits(lower.secret)).status).toBe(200);
    const equal = await create(capped.secret, { daily_credit_limit: 100 });
    expect(equal.daily_credit_limit).toBe(100);
    const inherited = await create(capped.secret, { name: 'inherits' });
    expect(inherited.daily_credit_limit).toBe(100);
    // And the lower-capped child cannot climb back up.
    await expectError(await call(lower.secret, 'POST', '/api-keys', { daily_credit_limit: 41 }), 403, 'key_escalation', 'daily_credit_limit');
  });

  it('a test key cannot create a live key', async () => {
    const t = await gw.seed({ environment: 'test', purchased: 100 });
    const body = await expectError(await call(t.secret, 'POST', '/api-keys', { environment: 'live' }), 403, 'key_escalation', 'environment');
    expect(body.error.type).toBe('permission_error');
    // Without an environment it inherits test.
    const child = await create(t.secret);
    expect(child.environment).toBe('test');
    expect(child.secret).toMatch(/^svc_test_/);
  });

  it('a capped key cannot revoke an uncapped key of its own account', async () => {
    const owner = await gw.seed({ purchased: 100 });
    const capped = await create(owner.secret, { daily_credit_limit: 50 });
    const body = await expectError(await call(capped.secret, 'DELETE', `/api-keys/${owner.keyId}`), 403, 'key_escalation');
    expect(body.error.type).toBe('permission_error');
    const higher = await create(owner.secret, { daily_credit_limit: 80 });
    await expectError(await call(capped.secret, 'DELETE', `/api-keys/${higher.id}`), 403, 'key_escalation');
    // Both keys still work and are listed.
    expect((await credits(owner.secret)).status).toBe(200);
    expect((await credits(higher.secret)).status).toBe(200);
    expect((await list(owner.secret)).map((k) => k.id)).toEqual(expect.arrayContaining([owner.keyId, higher.id]));
    // A lower-capped key is fair game.
    const lower = await create(owner.secret, { daily_credit_limit: 20 });
    expect((await call(capped.secret, 'DELETE', `/api-keys/${lower.id}`)).status).toBe(200);
  });

  it('a live key may create a test key', async () => {
    const live = await gw.seed({ purchased: 100 });
    const t = await create(live.secret, { environment: 'test', name: 'sandbox' });
    expect(t.environment).toBe('test');
    expect(t.secret).toMatch(/^svc_test_/);
    const res = await credits(t.secret);
    expect(await res.json()).toMatchObject({ environment: 'test', account_id: live.accountId });
  });

  it('a test key lists only test keys and cannot see or revoke live keys; a live key sees both', async () => {
    const live = await gw.seed({ purchased: 100 });
    const live2 = await create(live.secret, { name: 'live two' });
    const t1 = await create(live.secret, { environment: 'test', name: 't1' });
    const t2 = await create(t1.secret, { name: 't2' });
    const seenByTest = await list(t1.secret);
    expect(seenByTest.map((k) => k.id).sort()).toEqual([t1.id, t2.id].sort());
    expect(seenByTest.every((k) => k.environment === 'test')).toBe(true);
    expect((await list(live.secret)).map((k) => k.id).sort()).toEqual([live.keyId, live2.id, t1.id, t2.id].sort());
    // A live key is hidden from a test key: revoking it answers the same 404 as a missing key.
    await expectError(await call(t1.secret, 'DELETE', `/api-keys/${live2.id}`), 404, 'api_key_not_found', 'id');
    expect((await credits(live2.secret)).status).toBe(200);
    // A test key may revoke another test key; a live key may revoke a test key.
    expect((await call(t1.secret, 'DELETE', `/api-keys/${t2.id}`)).status).toBe(200);
    expect((await call(live.secret, 'DELETE', `/api-keys/${t1.id}`)).status).toBe(200);
    await expectError(await credits(t1.secret), 401, 'revoked_api_key');
  });
});

describe('test-environment isolation', () => {
  /** A paid upstream that counts its hits and always answers 503, so any live traffic to it is visible. */
  let paid: Server;
  let paidHits = 0;
  let gw2: TestGateway;

  beforeAll(async () => {
    paid = createServer((req, res) => {
      paidHits++;
      req.resume();
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'overloaded', type: 'server_error' } }));
    });
    await new Promise<void>((resolve) => paid.listen(0, '127.0.0.1', resolve));
    const port = (paid.address() as AddressInfo).port;
    const cfg = structuredClone(DEFAULT_CONFIG) as {
      providers: Record<string, unknown>;
      aliases: Record<string, { targets: { provider: string; model: string }[] }>;
    };
    cfg.providers.sandbox = { type: 'sandbox', pace: { time_to_first_token_ms: 0, tokens_per_second: 0 } };
    cfg.providers.paidco = { type: 'openai-compatible', base_url: `http://127.0.0.1:${port}/v1` };
    cfg.aliases['svc-fast'] = { targets: [{ provider: 'paidco', model: 'paid-fast' }] };
    gw2 = await startTestGateway({ config: parseConfig(cfg) });
  });
  afterAll(async () => {
    await gw2.close();
    await new Promise<void>((resolve) => paid.close(() => resolve()));
  });

  it('a test key spends test credits only and is served by the sandbox, never the paid upstream', async () => {
    const t = await gw2.seed({ environment: 'test', purchased: 5_000 });
    // Live credits and a live key for the same account.
    await gw2.store.ledger.grant({
      accountId: t.accountId,
      environment: 'live',
      kind: 'purchased',
      amount: 7_000,
      expiresAt: null,
      idempotencyKey: null,
    });
    await gw2.store.ledger.grant({
      accountId: t.accountId,
      environment: 'live',
      kind: 'earned',
      amount: 300,
      expiresAt: Date.now() + 86_400_000,
      idempotencyKey: null,
    });
    const live = await createApiKey(gw2.store.keys, { accountId: t.accountId, environment: 'live', name: 'live', dailyCreditLimit: null });
    const liveBefore = await gw2.store.ledger.balance(t.accountId, 'live');

    const res = await chat(gw2, t.secret, { model: 'svc-fast', messages: [{ role: 'user', content: 'Summarize: tests are good.' }], max_tokens: 30 });
    const body = (await res.json()) as { svc: { routed_provider: string; routed_model: string; credits_used: number; balance_remaining: number } };
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.svc.routed_provider).toBe('sandbox');
    expect(body.svc.routed_model).toBe('sandbox/sandbox-fast');
    expect(body.svc.credits_used).toBeGreaterThan(0);
    expect(paidHits).toBe(0);

    const testAfter = await gw2.store.ledger.balance(t.accountId, 'test');
    expect(testAfter.purchased).toBe(5_000 - body.svc.credits_used);
    expect(body.svc.balance_remaining).toBe(5_000 - body.svc.credits_used);
    expect(await gw2.store.ledger.balance(t.accountId, 'live')).toEqual(liveBefore);

    // The credits endpoint of each key reports its own environment.
    const tc = (await (await fetch(`${gw2.url}/credits`, { headers: { authorization: `Bearer ${t.secret}` } })).json()) as Record<string, unknown>;
    expect(tc).toMatchObject({ environment: 'test', total_credits: 5_000 - body.svc.credits_used });
    const lc = (await (await fetch(`${gw2.url}/credits`, { headers: { authorization: `Bearer ${live.secret}` } })).json()) as Record<string, unknown>;
    expect(lc).toMatchObject({ environment: 'live', total_credits: 7_300 });

    // Test usage is reported to the test key only.
    const tu = (await (await fetch(`${gw2.url}/usage`, { headers: { authorization: `Bearer ${t.secret}` } })).json()) as Record<string, unknown>;
    expect(tu).toMatchObject({ environment: 'test', total_requests: 1, total_credits: body.svc.credits_used });
    const lu = (await (await fetch(`${gw2.url}/usage`, { headers: { authorization: `Bearer ${live.secret}` } })).json()) as Record<string, unknown>;
    expect(lu).toMatchObject({ environment: 'live', total_requests: 0, total_credits: 0 });

    // The live key of the same account does go to the paid upstream (here failing), and a failure charges nothing.
    const liveRes = await chat(gw2, live.secret, { model: 'svc-fast', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 });
    await expectError(liveRes, 503, 'upstream_unavailable');
    expect(paidHits).toBeGreaterThan(0);
    expect(await gw2.store.ledger.balance(t.accountId, 'live')).toEqual(liveBefore);
    expect((await gw2.store.ledger.balance(t.accountId, 'test')).purchased).toBe(5_000 - body.svc.credits_used);
    expect(await gw2.store.ledger.countPendingHolds(t.accountId)).toBe(0);
  });

  it('a test key without test credits is refused (402) even when live credits exist', async () => {
    const live = await gw2.seed({ purchased: 50_000 });
    const t = await createApiKey(gw2.store.keys, { accountId: live.accountId, environment: 'test', name: 'broke', dailyCreditLimit: null });
    const hits = paidHits;
    const res = await chat(gw2, t.secret, { model: 'svc-smart', messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 });
    await expectError(res, 402, 'insufficient_credits');
    expect((await gw2.store.ledger.balance(live.accountId, 'live')).purchased).toBe(50_000);
    expect(paidHits).toBe(hits);
    expect(await gw2.store.ledger.countPendingHolds(live.accountId)).toBe(0);
  });
});

describe('the active-key limit (limits.max_api_keys_per_account)', () => {
  let small: TestGateway;
  beforeAll(async () => {
    const cfg = structuredClone(DEFAULT_CONFIG) as Record<string, unknown>;
    cfg.limits = { max_api_keys_per_account: 3 };
    small = await startTestGateway({ config: parseConfig(cfg) });
  });
  afterAll(() => small.close());

  it('refuses a key past the limit with 403 api_key_limit_reached; a revocation frees a place; the operator is not limited', async () => {
    const a = await small.seed({ purchased: 1000 });
    const create = (secret: string) =>
      fetch(`${small.url}/api-keys`, { method: 'POST', headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' }, body: '{}' });
    // The seeded key is 1 of 3.
    const made = [await create(a.secret), await create(a.secret)];
    expect(made.map((r) => r.status)).toEqual([201, 201]);
    const refused = await create(a.secret);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as ErrorBody).error).toMatchObject({ type: 'permission_error', code: 'api_key_limit_reached' });
    const second = (await made[1]?.json()) as Created;
    const revoked = await fetch(`${small.url}/api-keys/${second.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${a.secret}` } });
    expect(revoked.status).toBe(200);
    expect((await create(a.secret)).status).toBe(201);
    // The operator's own keys (CLI, admin API) are not bounded by it.
    await createApiKey(small.store.keys, { accountId: a.accountId, environment: 'live', name: 'operator', dailyCreditLimit: null });
    expect((await small.store.keys.listActiveKeys(a.accountId)).length).toBe(4);
  });
});
