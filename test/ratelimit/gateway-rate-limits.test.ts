/**
 * Rate limits through a real gateway: the 429 and its headers, exact counts under 200 concurrent requests,
 * no credit held by a refused request, limits set at key creation, and a Redis that stops mid-run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, parseConfig } from '../../src/config/schema.js';
import { createApiKey } from '../../src/keys/key-service.js';
import { chat, seedAccount, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { startGateway, type RunningGateway } from '../../src/runtime/node/server.js';
import { silentLogger } from '../../src/core/logger.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const BODY = { model: 'svc-fast', messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 };

async function limitedKey(gw: { store: TestGateway['store'] }, limits: { rpmLimit?: number; tpmLimit?: number }) {
  const seeded = await seedAccount(gw.store, { purchased: 10_000_000 });
  const { secret, record } = await createApiKey(gw.store.keys, {
    accountId: seeded.accountId,
    environment: 'live',
    name: 'limited',
    dailyCreditLimit: null,
    ...limits,
  });
  return { ...seeded, secret, keyId: record.id };
}

describe('rate limits in one gateway (in process)', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(() => gw.close());

  it('answers 429 rate_limit_exceeded with Retry-After and the x-ratelimit headers at the limit', async () => {
    const k = await limitedKey(gw, { rpmLimit: 2, tpmLimit: 100_000 });
    const first = await chat(gw, k.secret, BODY);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-limit-requests')).toBe('2');
    expect(first.headers.get('x-ratelimit-remaining-requests')).toBe('1');
    expect(first.headers.get('x-ratelimit-reset-requests')).toMatch(/^(\d+(\.\d+)?s|1m0s)$/);
    expect(first.headers.get('x-ratelimit-limit-tokens')).toBe('100000');
    expect(Number(first.headers.get('x-ratelimit-remaining-tokens'))).toBeLessThan(100_000 - 10);
    await first.text();
    const second = await chat(gw, k.secret, { ...BODY, stream: true });
    expect(second.status).toBe(200);
    expect(second.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    await second.text();
    const third = await chat(gw, k.secret, BODY);
    expect(third.status).toBe(429);
    expect(await third.json()).toMatchObject({ error: { type: 'rate_limit_error', code: 'rate_limit_exceeded' } });
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThanOrEqual(59);
    expect(Number(third.headers.get('retry-after-ms'))).toBeGreaterThan(58_000);
    expect(third.headers.get('x-ratelimit-remaining-requests')).toBe('0');
  });

  it('a leaked rate-limited key that mints keys gets no more requests through: the minted keys share its window, and die with it', async () => {
    const leaked = await limitedKey(gw, { rpmLimit: 5 });
    const minted: string[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${gw.url}/api-keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${leaked.secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `minted ${i}` }),
      });
      expect(res.status).toBe(201);
      const created = (await res.json()) as { secret: string; parent_key_id: string | null; rpm_limit: number | null };
      expect(created).toMatchObject({ parent_key_id: leaked.keyId, rpm_limit: 5 });
      minted.push(created.secret);
    }
    const secrets = [leaked.secret, ...minted];
    const statuses = await Promise.all(
      Array.from({ length: 50 }, async (_, i) => {
        const res = await chat(gw, secrets[i % secrets.length] as string, BODY);
        await res.text();
        return res.status;
      }),
    );
    // Before key families took in rate limits, each minted key had a window of its own: 25 of 50.
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(45);
    const revoke = await fetch(`${gw.url}/api-keys/${leaked.keyId}`, { method: 'DELETE', headers: { authorization: `Bearer ${leaked.secret}` } });
    expect(revoke.status).toBe(200);
    for (const secret of minted) {
      const res = await chat(gw, secret, BODY);
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ error: { code: 'revoked_api_key' } });
    }
  });

  it('admits exactly rpm of 200 concurrent requests; the refused ones hold and spend nothing', async () => {
    const k = await limitedKey(gw, { rpmLimit: 50 });
    const before = await gw.store.ledger.balance(k.accountId, 'live');
    const answers = await Promise.all(
      Array.from({ length: 200 }, async (_, i) => {
        const res = await chat(gw, k.secret, { ...BODY, stream: i % 2 === 0 });
        const text = await res.text();
        return { status: res.status, text };
      }),
    );
    expect(answers.filter((a) => a.status === 200)).toHaveLength(50);
    expect(answers.filter((a) => a.status === 429)).toHaveLength(150);
    const after = await gw.store.ledger.balance(k.accountId, 'live');
    expect(after.reserved).toBe(0);
    const usage = await gw.store.usage.rollup({
      accountId: k.accountId,
      environment: 'live',
      startDay: '2000-01-01',
      endDay: '2100-01-01',
      model: null,
    });
    expect(usage.reduce((sum, r) => sum + r.requests, 0)).toBe(50);
    // Spent = what the 50 admitted requests were charged, nothing more.
    expect(before.purchased - after.purchased).toBe(usage.reduce((sum, r) => sum + r.credits, 0));
  });

  it('refuses a request larger than tpm by itself without Retry-After', async () => {
    const k = await limitedKey(gw, { tpmLimit: 50 });
    const res = await chat(gw, k.secret, { ...BODY, max_tokens: 100 });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBeNull();
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/Request too large/);
  });

  it('sets limits at key creation, lists them, and a limited key cannot create a looser one', async () => {
    const k = await limitedKey(gw, { rpmLimit: 10 });
    const post = (body: unknown) =>
      fetch(`${gw.url}/api-keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${k.secret}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const inherited = await post({ name: 'child' });
    expect(inherited.status).toBe(201);
    expect(await inherited.json()).toMatchObject({ rpm_limit: 10, tpm_limit: null });
    const lower = await post({ rpm_limit: 5, tpm_limit: 1000 });
    expect(await lower.json()).toMatchObject({ rpm_limit: 5, tpm_limit: 1000 });
    expect((await post({ rpm_limit: 11 })).status).toBe(403);
    expect((await post({ rpm_limit: null })).status).toBe(403);
    expect((await post({ rpm_limit: 0 })).status).toBe(400);
    const list = (await (await fetch(`${gw.url}/api-keys`, { headers: { authorization: `Bearer ${k.secret}` } })).json()) as {
      data: { rpm_limit: number | null }[];
    };
    // The seed key of the account (no limit of its own), the limited key and its two children.
    expect(list.data.map((d) => d.rpm_limit).sort()).toEqual([10, 10, 5, null]);
  });

  it('a rate-limited key cannot revoke a looser key of its account (it could not have created one)', async () => {
    // Before, only the environment and the daily cap were checked on revocation: a leaked key limited to 5
    // requests a minute could revoke the account's unlimited keys, the operator's included.
    const seeded = await seedAccount(gw.store, { purchased: 10_000_000 });
    const limited = await createApiKey(gw.store.keys, { accountId: seeded.accountId, environment: 'live', name: 'limited', dailyCreditLimit: null, rpmLimit: 5 });
    const higher = await createApiKey(gw.store.keys, { accountId: seeded.accountId, environment: 'live', name: 'higher', dailyCreditLimit: null, rpmLimit: 10 });
    const revoke = (id: string) => fetch(`${gw.url}/api-keys/${id}`, { method: 'DELETE', headers: { authorization: `Bearer ${limited.secret}` } });
    for (const id of [seeded.keyId, higher.record.id]) {
      const res = await revoke(id);
      expect(res.status).toBe(403);
      expect(await res.json()).toMatchObject({ error: { type: 'permission_error', code: 'key_escalation', param: 'rpm_limit' } });
    }
    // The keys it tried to revoke still work.
    for (const secret of [seeded.secret, higher.secret]) {
      const res = await chat(gw, secret, BODY);
      expect(res.status).toBe(200);
      await res.text();
    }
    expect((await gw.store.keys.findKey(seeded.keyId))?.revokedAt).toBeNull();
    // A key no looser than itself (its own child, which inherits its limit) it may still revoke.
    const child = await fetch(`${gw.url}/api-keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${limited.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'child' }),
    });
    expect(child.status).toBe(201);
    const { id: childId } = (await child.json()) as { id: string };
    expect((await revoke(childId)).status).toBe(200);
  });

  it('key families are at most 16 deep: the 16th key is made and served within the root\'s window, the 17th is refused', async () => {
    // Before, creation had no bound and the ancestors were read up to 32: a chain minted deeper left the
    // root's window out of its deepest keys' requests, which the root's rate limit then did not count.
    const root = await limitedKey(gw, { rpmLimit: 5 });
    const mint = (secret: string) =>
      fetch(`${gw.url}/api-keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'chain' }),
      });
    // Level 1 is the root (the operator's); each new key makes the next.
    const chain = [{ id: root.keyId, secret: root.secret }];
    for (let level = 2; level <= 16; level++) {
      const parent = chain.at(-1) as { id: string; secret: string };
      const res = await mint(parent.secret);
      expect(res.status, `creating level ${level}`).toBe(201);
      const created = (await res.json()) as { id: string; secret: string; parent_key_id: string | null; rpm_limit: number | null };
      expect(created).toMatchObject({ parent_key_id: parent.id, rpm_limit: 5 });
      chain.push({ id: created.id, secret: created.secret });
    }
    const deepest = chain.at(-1) as { id: string; secret: string };
    const refused = await mint(deepest.secret);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: { type: 'permission_error', code: 'key_family_too_deep' } });
    expect((await gw.store.keys.listActiveKeys(root.accountId)).filter((k) => k.name === 'chain')).toHaveLength(15);

    // The root spends 4 of its 5; the deepest key's first request is the 5th in the root's window.
    for (let i = 0; i < 4; i++) {
      const res = await chat(gw, root.secret, BODY);
      expect(res.status).toBe(200);
      await res.text();
    }
    const served = await chat(gw, deepest.secret, BODY);
    expect(served.status).toBe(200);
    await served.text();
    // Its own window holds one request: the 429 is the root's, which counted the deepest key's request.
    const over = await chat(gw, deepest.secret, BODY);
    expect(over.status).toBe(429);
    expect(await over.json()).toMatchObject({ error: { code: 'rate_limit_exceeded' } });
    expect((await chat(gw, root.secret, BODY)).status).toBe(429);

    // Keys put deeper by other means (the store, as a corrupted chain would be) are refused at request time.
    // At level 18 the ancestors read (16) no longer reach the root: served, its request would escape the
    // root's window, which is full.
    let parentKeyId = deepest.id;
    for (const level of [17, 18]) {
      const deeper = await createApiKey(gw.store.keys, { accountId: root.accountId, environment: 'live', name: `level ${level}`, dailyCreditLimit: null, rpmLimit: 5, parentKeyId });
      parentKeyId = deeper.record.id;
      const res = await chat(gw, deeper.secret, BODY);
      expect(res.status, `a request with the level-${level} key`).toBe(403);
      expect(await res.json()).toMatchObject({ error: { type: 'permission_error', code: 'key_family_too_deep' } });
    }
  });

  it('a key without limits gets no rate-limit headers', async () => {
    const k = await limitedKey(gw, {});
    const res = await chat(gw, k.secret, BODY);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit-requests')).toBeNull();
  });
});

describe('the configured default applies to keys without their own limit', () => {
  it('rate_limits.rpm', async () => {
    const cfg = structuredClone(DEFAULT_CONFIG) as Record<string, unknown> & { providers: { sandbox: { pace: unknown } } };
    cfg.providers.sandbox.pace = { time_to_first_token_ms: 0, tokens_per_second: 0 };
    cfg.rate_limits = { rpm: 3 };
    const gw = await startTestGateway({ config: parseConfig(cfg) });
    try {
      const k = await gw.seed({ purchased: 1_000_000 });
      const statuses = await Promise.all(Array.from({ length: 10 }, async () => (await chat(gw, k.secret, BODY)).status));
      expect(statuses.filter((s) => s === 200)).toHaveLength(3);
    } finally {
      await gw.close();
    }
  });
});

/** A redis-server of this test's own, on a free port: stopping it must not touch the shared one. */
async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no'], { stdio: 'pipe' });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('redis-server did not start')), 5000);
    child.stdout?.on('data', (d: Buffer) => {
      if (d.toString().includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  return child;
}

describe('Redis stopped mid-run', () => {
  let redis: ChildProcess;
  let port: number;
  const gateways: RunningGateway[] = [];
  let dir: string;
  beforeAll(async () => {
    port = await freePort();
    redis = await startRedis(port);
    dir = await mkdtemp(join(tmpdir(), 'svc-rl-'));
  });
  afterAll(async () => {
    for (const g of gateways) await g.close();
    redis.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  });

  async function gateway(onError: 'open' | 'closed'): Promise<RunningGateway> {
    const cfg = structuredClone(DEFAULT_CONFIG) as Record<string, unknown> & { providers: { sandbox: { pace: unknown } } };
    cfg.providers.sandbox.pace = { time_to_first_token_ms: 0, tokens_per_second: 0 };
    cfg.rate_limits = { on_redis_error: onError, redis_timeout_ms: 200 };
    const g = await startGateway({
      config: parseConfig(cfg),
      secrets: {},
      databaseUrl: `sqlite:${join(dir, `${onError}.db`)}`,
      port: 0,
      logger: silentLogger,
      redisUrl: `redis://127.0.0.1:${port}`,
    });
    gateways.push(g);
    return g;
  }

  it("fails open (default: the instance's own limits) or closed (503) as configured, never a 500", async () => {
    const open = await gateway('open');
    const closed = await gateway('closed');
    const ko = await limitedKey(open, { rpmLimit: 5 });
    const kc = await limitedKey(closed, { rpmLimit: 5 });
    // With Redis up, both limit.
    const up = await Promise.all(Array.from({ length: 8 }, async () => (await chat(open, ko.secret, BODY)).status));
    expect(up.filter((s) => s === 200)).toHaveLength(5);
    expect((await chat(closed, kc.secret, BODY)).status).toBe(200);

    // Stopped mid-run, with requests in flight.
    const during = Array.from({ length: 40 }, async (_, i) => {
      await new Promise((r) => setTimeout(r, i * 5));
      const [o, c] = await Promise.all([chat(open, ko.secret, BODY), chat(closed, kc.secret, BODY)]);
      return [o.status, c.status];
    });
    redis.kill('SIGKILL');
    await new Promise((r) => redis.once('exit', r));
    const pairs = await Promise.all(during);
    const statuses = pairs.flat();
    expect(statuses.filter((s) => s >= 500 && s !== 503)).toEqual([]);

    // Open: this instance's own window decides while Redis is away. Redis's window was full (the 5 above), so
    // every 200 from here on is the fallback's, and it admits exactly its own 5 a minute: limited, not unlimited.
    const afterOpen = await Promise.all(Array.from({ length: 10 }, async () => (await chat(open, ko.secret, BODY)).status));
    const openStatuses = [...pairs.map(([o]) => o), ...afterOpen];
    expect(openStatuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
    expect(openStatuses.filter((s) => s === 200)).toHaveLength(5);
    expect(afterOpen.at(-1)).toBe(429);
    const refused = await chat(closed, kc.secret, BODY);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await refused.json()).toMatchObject({ error: { code: 'rate_limiter_unavailable' } });
    // The refused request held nothing.
    expect((await closed.store.ledger.balance(kc.accountId, 'live')).reserved).toBe(0);

    // Back: limits apply again (the restarted Redis is empty, so a fresh window).
    redis = await startRedis(port);
    await new Promise((r) => setTimeout(r, 2500));
    const back = await Promise.all(Array.from({ length: 8 }, async () => (await chat(open, ko.secret, BODY)).status));
    expect(back.filter((s) => s === 200)).toHaveLength(5);
  }, 30_000);
});
