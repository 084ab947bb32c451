/**
 * A cluster of real gateway processes (`bin/svc-gateway.js serve`, the built code) sharing one database,
 * for the many-instance tests: spawn, find their ports, kill -9 one, stop them all.
 */
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Instance {
  url: string;
  child: ChildProcess;
  /** Everything the process wrote to stderr (JSON log lines). */
  log(): string;
}

export interface ClusterOptions {
  databaseUrl: string;
  dir: string;
  instances: number;
  /** Config overrides merged into a paced built-in sandbox catalog. */
  holdLeaseMs?: number;
  reaperIntervalMs?: number;
  pace?: { time_to_first_token_ms: number; tokens_per_second: number };
  /**
   * An OpenAI-compatible upstream outside the gateway processes (e.g. the sandbox HTTP server in the test
   * process) instead of the in-process sandbox provider, whose pacing runs on the gateway's own clock.
   */
  upstreamUrl?: string;
  /** Per-instance process options, by index (e.g. a preload for one of them). */
  instanceOptions?: (index: number) => InstanceOptions;
  /** The config's `rate_limits` section. */
  rateLimits?: Record<string, unknown>;
}

export interface InstanceOptions {
  /** Node options placed before the script, e.g. `['--import', './test/cluster/step-clock.mjs']`. */
  nodeArgs?: string[];
  env?: Record<string, string>;
}

export function writeClusterConfig(opts: ClusterOptions): string {
  const path = join(opts.dir, 'gateway.json');
  const pace = opts.pace ?? { time_to_first_token_ms: 5, tokens_per_second: 400 };
  const provider = opts.upstreamUrl === undefined ? 'sandbox' : 'upstream';
  const tier = (model: string) => ({ targets: [{ provider, model }] });
  writeFileSync(
    path,
    JSON.stringify({
      server: { hold_lease_ms: opts.holdLeaseMs ?? 60_000, reaper_interval_ms: opts.reaperIntervalMs ?? 1000 },
      ...(opts.rateLimits === undefined ? {} : { rate_limits: opts.rateLimits }),
      providers:
        opts.upstreamUrl === undefined
          ? { sandbox: { type: 'sandbox', pace } }
          : { upstream: { type: 'openai-compatible', base_url: opts.upstreamUrl, paid: false } },
      aliases: { 'svc-fast': tier('sandbox-fast'), 'svc-code': tier('sandbox-code'), 'svc-smart': tier('sandbox-smart') },
    }),
  );
  return path;
}

export async function startInstance(databaseUrl: string, configPath: string, options: InstanceOptions = {}): Promise<Instance> {
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), 'bin/svc-gateway.js', 'serve'], {
    env: { ...process.env, ...options.env, SVC_DATABASE_URL: databaseUrl, SVC_CONFIG: configPath, PORT: '0', HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not start:\n${out}\n${err}`)), 15_000);
    const onData = (): void => {
      const m = /listening on (http:\/\/localhost:\d+\/v1)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve((m[1] as string).replace('localhost', '127.0.0.1'));
      }
    };
    child.stdout?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`gateway exited with ${code}:\n${out}\n${err}`));
    });
  });
  return { url, child, log: () => err };
}

export async function startCluster(opts: ClusterOptions): Promise<Instance[]> {
  const config = writeClusterConfig(opts);
  // Migrations run once up front; the instances then start together, as a deploy would. Asynchronously:
  // the database may sit behind a proxy living in this very process.
  await promisify(execFile)(process.execPath, ['bin/svc-gateway.js', 'migrate'], {
    env: { ...process.env, SVC_DATABASE_URL: opts.databaseUrl },
  });
  return Promise.all(Array.from({ length: opts.instances }, (_, i) => startInstance(opts.databaseUrl, config, opts.instanceOptions?.(i))));
}

export async function stopInstance(i: Instance, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (i.child.exitCode !== null || i.child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    i.child.once('exit', () => resolve());
    i.child.kill(signal);
  });
}

export function ledgerVerify(databaseUrl: string): { ok: boolean; findings: unknown[] } {
  const r = spawnSync(process.execPath, ['bin/svc-gateway.js', 'ledger', 'verify', '--json'], {
    env: { ...process.env, SVC_DATABASE_URL: databaseUrl },
    encoding: 'utf8',
  });
  if (r.stdout.trim() === '') throw new Error(`ledger verify printed nothing: ${r.stderr}`);
  return JSON.parse(r.stdout) as { ok: boolean; findings: unknown[] };
}
