/** The operator API: token auth, accounts, idempotent grants (a webhook delivered twice grants once), keys. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { startGateway, type RunningGateway } from '../../src/runtime/node/server.js';
import { instantSandboxConfig, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const TOKEN = 'op-token-for-tests-0123456789abcdefghij';
let gw: RunningGateway;
let dir: string;
let admin: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-admin-'));
  gw = await startGateway({
    config: instantSandboxConfig(),
    secrets: {},
    databaseUrl: `sqlite:${join(dir, 'g.db')}`,
    port: 0,
    logger: silentLogger,
    adminToken: TOKEN,
  });
  admin = gw.url.replace(/\/v1$/, '/admin/v1');
});
afterAll(async () => {
  await gw.close();
  await rm(dir, { recursive: true, force: true });
});

function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${admin}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

describe('admin API', () => {
  it('refuses a missing or wrong operator token', async () => {
    expect((await fetch(`${admin}/accounts`, { method: 'POST', body: '{}' })).status).toBe(401);
    const wrong = await fetch(`${admin}/accounts`, { method: 'POST', body: '{}', headers: { authorization: `Bearer ${TOKEN}x` } });
    expect(wrong.status).toBe(401);
  });

  it('grants once per idempotency key, and a gateway key spends the credits', async () => {
    const account = (await (await call('POST', '/accounts', { name: 'acme' })).json()) as { id: string };
    const grant = { kind: 'purchased', amount: 700 };
    const first = await call('POST', `/accounts/${account.id}/credits`, grant, { 'idempotency-key': 'evt_1' });
    expect(first.status).toBe(201);
    const replays = await Promise.all(
      Array.from({ length: 5 }, () => call('POST', `/accounts/${account.id}/credits`, grant, { 'idempotency-key': 'evt_1' })),
    );
    expect(replays.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    const other = await call('POST', `/accounts/${account.id}/credits`, { ...grant, idempotency_key: 'evt_2' });
    expect(other.status).toBe(201);
    const earned = await call('POST', `/accounts/${account.id}/credits`, { kind: 'earned', amount: 50, expires_at: '2099-01-01T00:00:00Z' });
    expect(earned.status).toBe(201);

    const view = (await (await call('GET', `/accounts/${account.id}`)).json()) as {
      balances: { live: { purchased_credits: number; earned_credits: number } };
    };
    expect(view.balances.live.purchased_credits).toBe(1400);
    expect(view.balances.live.earned_credits).toBe(50);

    const key = (await (await call('POST', `/accounts/${account.id}/keys`, { name: 'svc', daily_credit_limit: 100 })).json()) as {
      id: string;
      secret: string;
    };
    const credits = await fetch(`${gw.url}/credits`, { headers: { authorization: `Bearer ${key.secret}` } });
    expect(((await credits.json()) as { total_credits: number }).total_credits).toBe(1450);
    const list = (await (await call('GET', `/accounts/${account.id}/keys`)).json()) as { data: { id: string }[] };
    expect(list.data.map((k) => k.id)).toEqual([key.id]);
    expect((await call('DELETE', `/keys/${key.id}`)).status).toBe(200);
    const refused = await fetch(`${gw.url}/credits`, { headers: { authorization: `Bearer ${key.secret}` } });
    expect(refused.status).toBe(401);
  });

  it('validates grants and names unknown accounts', async () => {
    const account = (await (await call('POST', '/accounts', {})).json()) as { id: string };
    const bad = await call('POST', `/accounts/${account.id}/credits`, { kind: 'earned', amount: 5 });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { param: string } }).error.param).toBe('expires_at');
    expect((await call('POST', `/accounts/${account.id}/credits`, { kind: 'purchased', amount: 0 })).status).toBe(400);
    expect((await call('POST', `/accounts/${account.id}/credits`, { kind: 'gift', amount: 5 })).status).toBe(400);
    const missing = await call('POST', '/accounts/acct_nope/credits', { kind: 'purchased', amount: 5 });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('account_not_found');
  });

  it('does not exist without an operator token', async () => {
    const plain: TestGateway = await startTestGateway();
    try {
      const r = await fetch(`${plain.url.replace(/\/v1$/, '/admin/v1')}/accounts`, { method: 'POST', body: '{}' });
      expect(r.status).toBe(404);
    } finally {
      await plain.close();
    }
  });
});
