/**
 * The operator CLI, run as a real process (`bin/svc-gateway.js`, the built code) against a SQLite file:
 * first-start hint, accounts, credits, keys, revoke, and a request through `serve` with a CLI-made key.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'svc-cli-'));
const env = { ...process.env, SVC_DATABASE_URL: `sqlite:${join(dir, 'cli.db')}` };
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function cli(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['bin/svc-gateway.js', ...args], { env, encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function json<T>(...args: string[]): T {
  const r = cli(...args, '--json');
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  return JSON.parse(r.stdout) as T;
}

async function serve(): Promise<{ url: string; output: () => string; logs: () => string; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, ['bin/svc-gateway.js', 'serve'], { env: { ...env, PORT: '0', HOST: '127.0.0.1' } });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`serve did not start: ${out}`)), 10_000);
    child.stdout.on('data', () => {
      const m = /listening on (http:\/\/localhost:\d+\/v1)/.exec(out);
      if (m) {
        clearTimeout(t);
        resolve(m[1] as string);
      }
    });
  });
  // Give the first-start hint, written right after the banner, a moment to arrive.
  await new Promise((r) => setTimeout(r, 100));
  return {
    url,
    output: () => out,
    logs: () => err,
    stop: () =>
      new Promise<void>((resolve) => {
        // 'close', not 'exit': the lines flushed at exit must have been read off the pipe.
        child.once('close', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

describe('svc-gateway CLI', () => {
  it('explains how to start on an empty database', async () => {
    const s = await serve();
    try {
      expect(s.output()).toContain('npx svc-gateway accounts create');
      expect(s.output()).toContain('npx svc-gateway keys create');
    } finally {
      await s.stop();
    }
  });

  it('writes the access line to stderr within about a second on a quiet gateway, and what is left at exit', async () => {
    const s = await serve();
    try {
      const refused = await fetch(`${s.url}/models`);
      expect(refused.status).toBe(401);
      // Lines are written in blocks (src/runtime/node/pino-logger.ts): a lone line waits for the periodic flush.
      const deadline = Date.now() + 3000;
      while (!/"msg":"request"/.test(s.logs()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      const line = s.logs().split('\n').find((l) => l.includes('"msg":"request"'));
      expect(line).toBeDefined();
      expect(JSON.parse(line as string)).toMatchObject({ level: 'info', status: 401, method: 'GET' });
    } finally {
      await s.stop();
    }
    expect(s.logs()).toContain('"msg":"shutting down"');
  });

  it('creates an account, grants credits, makes, lists and revokes keys', async () => {
    const account = json<{ id: string; name: string }>('accounts', 'create', '--name', 'acme');
    expect(account.id).toMatch(/^acct_/);
    expect(account.name).toBe('acme');

    const grant = json<{ balance: { purchased: number } }>('credits', 'grant', '--account', account.id, '--purchased', '5000');
    expect(grant.balance.purchased).toBe(5000);
    const earned = json<{ kind: string; expires_at: string }>(
      'credits', 'grant', '--account', account.id, '--earned', '300', '--expires-at', '2099-01-01T00:00:00Z',
    );
    expect(earned.kind).toBe('earned');
    const again = json<{ created: boolean }>(
      'credits', 'grant', '--account', account.id, '--purchased', '5000', '--idempotency-key', 'invoice-1',
    );
    expect(again.created).toBe(true);
    const repeat = json<{ created: boolean; balance: { purchased: number } }>(
      'credits', 'grant', '--account', account.id, '--purchased', '5000', '--idempotency-key', 'invoice-1',
    );
    expect(repeat.created).toBe(false);
    expect(repeat.balance.purchased).toBe(10_000);

    const key = json<{ id: string; secret: string; daily_credit_limit: number }>(
      'keys', 'create', '--account', account.id, '--name', 'ci', '--daily-credit-limit', '900',
    );
    expect(key.secret).toMatch(/^svc_live_/);
    expect(key.daily_credit_limit).toBe(900);

    const human = cli('keys', 'create', '--account', account.id, '--environment', 'test');
    expect(human.status).toBe(0);
    expect(human.stdout).toMatch(/svc_test_[0-9A-Za-z]{40}/);

    const list = json<{ data: { id: string; redacted_key: string }[] }>('keys', 'list', '--account', account.id);
    expect(list.data).toHaveLength(2);
    expect(JSON.stringify(list)).not.toContain(key.secret);

    const s = await serve();
    try {
      expect(s.output()).not.toContain('has no accounts');
      const headers = { authorization: `Bearer ${key.secret}` };
      const ok = await fetch(`${s.url}/credits`, { headers });
      expect(ok.status).toBe(200);
      expect(((await ok.json()) as { total_credits: number }).total_credits).toBe(10_300);

      const chatRes = await fetch(`${s.url}/chat/completions`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'svc-fast', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 }),
      });
      expect(chatRes.status).toBe(200);
      const verify = json<{ ok: boolean; findings: unknown[] }>('ledger', 'verify');
      expect(verify).toMatchObject({ ok: true, findings: [] });

      const revoked = json<{ deleted: boolean }>('keys', 'revoke', key.id);
      expect(revoked.deleted).toBe(true);
      const refused = await fetch(`${s.url}/credits`, { headers });
      expect(refused.status).toBe(401);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('revoked_api_key');
    } finally {
      await s.stop();
    }
  });

  it('refuses bad usage with exit code 2 and a message', () => {
    const r = cli('credits', 'grant', '--account', 'acct_x', '--purchased', '-5');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--purchased');
    expect(cli('credits', 'grant', '--account', 'acct_nope', '--purchased', '5').status).toBe(1);
    expect(cli('frobnicate').status).toBe(2);
    expect(cli('keys', 'revoke', 'key_doesnotexist').status).toBe(1);
  });

  // It used to hang: the store's connections and its checkpointer kept the process alive after the error.
  it('exits with the error when a start fails after the store is open (the port is taken)', async () => {
    const { createServer } = await import('node:net');
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const taken = (holder.address() as { port: number }).port;
    try {
      const child = spawn(process.execPath, ['bin/svc-gateway.js', 'serve'], { env: { ...env, PORT: String(taken), HOST: '127.0.0.1' } });
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      const code = await new Promise<number | null>((resolve) => {
        const t = setTimeout(() => {
          child.kill('SIGKILL');
          resolve(null);
        }, 15_000);
        child.once('exit', (c) => {
          clearTimeout(t);
          resolve(c);
        });
      });
      expect(code).toBe(1);
      expect(err).toContain('EADDRINUSE');
    } finally {
      holder.close();
    }
  });

  it('says a database it cannot use (a full disk) is that, without a stack trace, and exits 75 to retry', () => {
    // A file-size limit of 1 KiB stands in for a full disk: opening the database in WAL mode cannot size
    // its shared-memory file.
    const r = spawnSync('bash', ['-c', 'ulimit -f 1 && exec "$0" bin/svc-gateway.js accounts create --name full', process.execPath], { env, encoding: 'utf8' });
    expect(r.status).toBe(75);
    expect(r.stderr).toMatch(/^svc-gateway: the database cannot be used now: SQLite cannot be used now \(SQLITE_(IOERR|FULL)[A-Z_]*\)/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    // With room again, the same command works.
    expect(cli('accounts', 'create', '--name', 'full').status).toBe(0);
  });

  it('refuses a heap setting it cannot read before it starts anything (usage error, exit 2)', () => {
    const r = spawnSync(process.execPath, ['bin/svc-gateway.js', 'serve'], { env: { ...env, SVC_HEAP_GROWING_PERCENT: 'lots', PORT: '0' }, encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("SVC_HEAP_GROWING_PERCENT must be a whole number from 0 (V8's own choice) to 1000, got 'lots'");
  });

  it('names the bad field of a config file', async () => {
    const { writeFileSync } = await import('node:fs');
    const path = join(dir, 'bad.yaml');
    writeFileSync(path, 'providers:\n  up:\n    type: openai-compatible\n    base_url: not-a-url\naliases:\n  svc-fast: {targets: [{provider: nope, model: m}]}\n  svc-code: {targets: [{provider: up, model: m}]}\n  svc-smart: {targets: [{provider: up, model: m}]}\n');
    const r = spawnSync(process.execPath, ['bin/svc-gateway.js', 'serve'], { env: { ...env, SVC_CONFIG: path, PORT: '0' }, encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('providers.up.base_url');
    expect(r.stderr).toContain("aliases.svc-fast.targets[0].provider: unknown provider 'nope'");
  });
});
