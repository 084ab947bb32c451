/**
 * Starts a real gateway (real HTTP server on an ephemeral port, real SQLite file in a temp dir) for
 * end-to-end tests, and seeds an account with credits and a key through the store, as the CLI would.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '../../src/core/clock.js';
import { silentLogger, type Logger } from '../../src/core/logger.js';
import { newId } from '../../src/core/ids.js';
import { DEFAULT_CONFIG, parseConfig, type GatewayConfig } from '../../src/config/schema.js';
import { createApiKey } from '../../src/keys/key-service.js';
import { startGateway, type RunningGateway } from '../../src/runtime/node/server.js';
import type { Environment, Store } from '../../src/store/types.js';

export interface TestGateway extends RunningGateway {
  dir: string;
  /** Creates an account with the given credits and one key. */
  seed(opts?: SeedOptions): Promise<Seeded>;
}

export interface SeedOptions {
  purchased?: number;
  earned?: { amount: number; expiresAt: number }[];
  environment?: Environment;
  dailyCreditLimit?: number | null;
}

export interface Seeded {
  accountId: string;
  keyId: string;
  secret: string;
}

/** The built-in catalog with an instant sandbox, so tests do not wait for simulated pacing. */
export function instantSandboxConfig(): GatewayConfig {
  return pacedSandboxConfig(0, 0);
}

export async function seedAccount(store: Store, opts: SeedOptions = {}): Promise<Seeded> {
  const environment = opts.environment ?? 'live';
  const account = await store.keys.createAccount({ id: newId('acct_'), name: 'test' });
  if (opts.purchased) {
    await store.ledger.grant({
      accountId: account.id,
      environment,
      kind: 'purchased',
      amount: opts.purchased,
      expiresAt: null,
      idempotencyKey: null,
    });
  }
  for (const e of opts.earned ?? []) {
    await store.ledger.grant({
      accountId: account.id,
      environment,
      kind: 'earned',
      amount: e.amount,
      expiresAt: e.expiresAt,
      idempotencyKey: null,
    });
  }
  const { record, secret } = await createApiKey(store.keys, {
    accountId: account.id,
    environment,
    name: 'seed',
    dailyCreditLimit: opts.dailyCreditLimit ?? null,
  });
  return { accountId: account.id, keyId: record.id, secret };
}

export async function startTestGateway(
  opts: {
    config?: GatewayConfig;
    clock?: Clock;
    adminToken?: string;
    adminListener?: { host: string; port: number };
    /** Another database than the default fresh SQLite file (a PostgreSQL URL with `?schema=`). */
    databaseUrl?: string;
    /** Where the gateway's log lines go (default: nowhere). */
    logger?: Logger;
  } = {},
): Promise<TestGateway> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-gw-'));
  const gw = await startGateway({
    config: opts.config ?? instantSandboxConfig(),
    secrets: {},
    databaseUrl: opts.databaseUrl ?? `sqlite:${join(dir, 'gateway.db')}`,
    port: 0,
    logger: opts.logger ?? silentLogger,
    ...(opts.clock ? { clock: opts.clock } : {}),
    ...(opts.adminToken ? { adminToken: opts.adminToken } : {}),
    ...(opts.adminListener ? { adminListener: opts.adminListener } : {}),
  });
  return {
    ...gw,
    dir,
    seed: (o) => seedAccount(gw.store, o),
    async close() {
      await gw.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The built-in catalog with a paced sandbox, for tests that need a request to stay in flight. */
export function pacedSandboxConfig(timeToFirstTokenMs: number, tokensPerSecond: number): GatewayConfig {
  const cfg = structuredClone(DEFAULT_CONFIG) as { providers: { sandbox: { pace: unknown } } };
  cfg.providers.sandbox.pace = { time_to_first_token_ms: timeToFirstTokenMs, tokens_per_second: tokensPerSecond };
  return parseConfig(cfg);
}

export function chat(gw: { url: string }, secret: string, body: unknown, init: RequestInit = {}): Promise<Response> {
  return fetch(`${gw.url}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    ...init,
  });
}

/** Splits an SSE body into its `data:` payloads, asserting the framing on the way. */
export function sseData(raw: string): string[] {
  if (!raw.endsWith('\n\n')) throw new Error('SSE body does not end with a blank line');
  return raw
    .slice(0, -2)
    .split('\n\n')
    .filter((block) => !block.startsWith(':'))
    .map((block) => {
      if (!block.startsWith('data: ') || block.includes('\n')) throw new Error(`unexpected SSE block: ${JSON.stringify(block)}`);
      return block.slice(6);
    });
}

/** A body read to its end, and in how many reads it came (a stream relayed as produced arrives in several). */
export async function readInPieces(r: Response): Promise<{ text: string; reads: number }> {
  const reader = (r.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = '';
  let reads = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { text: text + decoder.decode(), reads };
    reads++;
    text += decoder.decode(value, { stream: true });
  }
}
