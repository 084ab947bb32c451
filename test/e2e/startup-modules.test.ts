/**
 * What `svc-gateway serve` loads: the embedded default (SQLite, built-in catalog, no Redis, no OTLP
 * endpoint) must not hold the optional integrations in memory (the PostgreSQL driver, the Redis client,
 * the YAML parser, the OpenTelemetry SDK); each is loaded when it is configured. Recorded by a preload in
 * the real process: the ESM loader's resolutions (through a resolve hook) and CommonJS's module cache.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'svc-startup-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const HOOKS = join(dir, 'hooks.mjs');
const PRELOAD = join(dir, 'preload.mjs');
writeFileSync(
  HOOKS,
  `import { appendFileSync } from 'node:fs';
let log;
export function initialize(data) { log = data.log; }
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(log, result.url + '\\n');
  return result;
}
`,
);
writeFileSync(
  PRELOAD,
  `import { register, createRequire } from 'node:module';
import { appendFileSync } from 'node:fs';
const log = process.env.SVC_TEST_MODULE_LOG;
register(${JSON.stringify(pathToFileURL(HOOKS).href)}, { data: { log } });
const require = createRequire(import.meta.url);
process.on('exit', () => appendFileSync(log, Object.keys(require.cache).join('\\n') + '\\n'));
`,
);

const OPTIONAL = ['node_modules/postgres/', 'node_modules/ioredis/', 'node_modules/yaml/', 'node_modules/@opentelemetry/sdk-trace-node/'];

/** Starts `serve` with `env` over a clean environment, stops it, and returns the packages it loaded. */
async function modulesLoaded(name: string, env: Record<string, string>): Promise<string[]> {
  const log = join(dir, `${name}.log`);
  writeFileSync(log, '');
  const {
    SVC_DATABASE_URL: _db,
    SVC_REDIS_URL: _redis,
    SVC_CONFIG: _config,
    OTEL_EXPORTER_OTLP_ENDPOINT: _otel,
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: _otelTraces,
    ...base
  } = process.env;
  const child = spawn(process.execPath, ['--import', pathToFileURL(PRELOAD).href, 'bin/svc-gateway.js', 'serve'], {
    env: { ...base, SVC_DATABASE_URL: `sqlite:${join(dir, `${name}.db`)}`, PORT: '0', HOST: '127.0.0.1', SVC_TEST_MODULE_LOG: log, ...env },
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`serve did not start: ${out}${err}`));
    }, 15_000);
    child.stdout.on('data', () => {
      if (out.includes('listening on')) {
        clearTimeout(t);
        resolve();
      }
    });
  });
  await new Promise<void>((resolve) => {
    child.once('close', () => resolve());
    child.kill('SIGTERM');
  });
  const loaded = readFileSync(log, 'utf8');
  // The CommonJS record (plain paths, where the ESM loader's are URLs) is written at exit: without it the
  // test would see only half of what was loaded.
  expect(loaded).toMatch(/^\/.*\/node_modules\/libsql\//m);
  return OPTIONAL.filter((p) => loaded.includes(p));
}

describe('svc-gateway serve: optional integrations', () => {
  it('loads none of them in the embedded default', async () => {
    expect(await modulesLoaded('default', {})).toEqual([]);
  });

  it('loads the YAML parser and the OpenTelemetry SDK when they are configured', async () => {
    const config = join(dir, 'gateway.yaml');
    writeFileSync(
      config,
      [
        'providers:',
        '  sandbox: {type: sandbox}',
        'aliases:',
        '  svc-fast: {targets: [{provider: sandbox, model: f}]}',
        '  svc-code: {targets: [{provider: sandbox, model: c}]}',
        '  svc-smart: {targets: [{provider: sandbox, model: s}]}',
        '',
      ].join('\n'),
    );
    const loaded = await modulesLoaded('configured', {
      SVC_CONFIG: config,
      // Nothing listens there; spans are only sent in batches, and none are made before the stop.
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
    });
    expect(loaded).toEqual(['node_modules/yaml/', 'node_modules/@opentelemetry/sdk-trace-node/']);
  });
});
