/**
 * The published package works for a consumer: `npm pack` of this project (dist/ as built by `npm run build`,
 * the suite's first step), installed from the tarball into an empty directory with production dependencies
 * only, its install script run as npm runs it for a dependency, then the installed `svc-gateway` CLI makes a
 * key and `serve` answers /v1/models with the four aliases. Dependencies come from npm's cache when it has
 * them (`--prefer-offline`; CI's `npm ci` fills it), from the registry otherwise.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'svc-npm-pack-'));
const app = join(dir, 'app');
const installed = join(app, 'node_modules', 'svc-gateway');
const cliPath = join(app, 'node_modules', '.bin', 'svc-gateway');
const timings: Record<string, number> = {};

// The consumer's environment: nothing of this machine's gateway settings leaks in.
const env: NodeJS.ProcessEnv = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !/^(SVC_|PORT$|HOST$|NODE_OPTIONS$|npm_)/.test(k)),
);
env.NODE_ENV = 'production';
env.SVC_DATABASE_URL = `sqlite:${join(dir, 'data', 'gateway.db')}`;

async function timed<T>(label: string, f: () => Promise<T>): Promise<T> {
  const start = performance.now();
  try {
    return await f();
  } finally {
    timings[label] = Math.round(performance.now() - start);
  }
}

async function cli<T>(...args: string[]): Promise<T> {
  const { stdout } = await run(process.execPath, [cliPath, ...args, '--json'], { cwd: app, env });
  return JSON.parse(stdout) as T;
}

let tarball = '';
let packedFiles: string[] = [];

beforeAll(async () => {
  if (!existsSync(join(root, 'dist', 'runtime', 'node', 'cli.js'))) {
    throw new Error('dist/ is not built: run `npm run build` first (npm test does it before vitest)');
  }
  // --ignore-scripts: `prepare` would rebuild dist/ in the working tree; the suite built it already.
  const packed = await timed('npm pack', () =>
    run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: root, env: process.env, maxBuffer: 64 * 1024 * 1024 }),
  );
  const [info] = JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[];
  tarball = join(dir, (info as { filename: string }).filename);
  packedFiles = (info as { files: { path: string }[] }).files.map((f) => f.path);

  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'consumer', private: true }));
  await timed('npm install', () =>
    run('npm', ['install', '--omit=dev', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', tarball], {
      cwd: app,
      env,
    }),
  );
}, 120_000);

afterAll(() => {
  process.stdout.write(`npm-pack timings (ms): ${JSON.stringify(timings)}\n`);
  rmSync(dir, { recursive: true, force: true });
});

describe('the npm package', () => {
  it('holds the CLI and the built code, not the sources or tests', () => {
    expect(packedFiles).toContain('package.json');
    expect(packedFiles).toContain('bin/svc-gateway.js');
    expect(packedFiles).toContain('dist/runtime/node/cli.js');
    expect(packedFiles.filter((f) => /^(src|test|bench|scripts|eval)\//.test(f))).toEqual([]);
    expect(existsSync(cliPath), 'node_modules/.bin/svc-gateway linked').toBe(true);
  });

  it("runs its install script as a consumer's npm does, and gets the patched postgres driver", async () => {
    // npm rebuild runs the package's install scripts (postinstall: patch-package) in node_modules/svc-gateway.
    const rebuilt = await timed('postinstall', () =>
      run('npm', ['rebuild', 'svc-gateway', '--foreground-scripts', '--loglevel=error'], { cwd: app, env }).then(
        (r) => ({ code: 0, output: r.stdout + r.stderr }),
        (e: { code?: number; stdout?: string; stderr?: string }) => ({ code: e.code ?? 1, output: `${e.stdout ?? ''}${e.stderr ?? ''}` }),
      ),
    );
    expect(rebuilt.code, `postinstall failed for a consumer:\n${rebuilt.output}`).toBe(0);

    // The driver the installed gateway imports: its own nested copy if any, else the hoisted one.
    const nested = join(installed, 'node_modules', 'postgres');
    const driver = existsSync(nested) ? nested : join(app, 'node_modules', 'postgres');
    const patched = ['src', 'cjs/src', 'cf/src'].map((d) => readFileSync(join(driver, d, 'connection.js'), 'utf8').includes('svc-gateway patch'));
    expect(
      patched,
      `the installed postgres driver (${driver}) lacks patches/postgres+3.4.9.patch: patch-package cannot patch a ` +
        "dependency's hoisted node_modules, and patches/ is not packed. Bundle the patched driver: " +
        '"bundleDependencies": ["postgres"] in package.json',
    ).toEqual([true, true, true]);
  });

  it('serves /v1/models with the four aliases from the installed CLI', async () => {
    const account = await cli<{ id: string }>('accounts', 'create', '--name', 'packed');
    const key = await cli<{ secret: string }>('keys', 'create', '--account', account.id);
    expect(key.secret).toMatch(/^svc_live_/);

    const child: ChildProcess = spawn(process.execPath, [cliPath, 'serve'], { cwd: app, env: { ...env, PORT: '0', HOST: '127.0.0.1' } });
    let out = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const base = await timed('serve start', () =>
        new Promise<string>((resolve, reject) => {
          const t = setTimeout(() => reject(new Error(`serve did not start:\n${out}`)), 15_000);
          const look = (): void => {
            const m = /listening on (http:\/\/localhost:\d+)\/v1/.exec(out);
            if (m) {
              clearTimeout(t);
              resolve((m[1] as string).replace('localhost', '127.0.0.1'));
            }
          };
          child.stdout?.on('data', look);
          void exited.then((code) => reject(new Error(`serve exited with ${code}:\n${out}`)));
        }),
      );
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
      const res = await fetch(`${base}/v1/models`, { headers: { authorization: `Bearer ${key.secret}` } });
      expect(res.status).toBe(200);
      const ids = ((await res.json()) as { data: { id: string }[] }).data.map((m) => m.id);
      expect(ids.sort()).toEqual(['svc-auto', 'svc-code', 'svc-fast', 'svc-smart']);
    } finally {
      if (child.exitCode === null) child.kill('SIGTERM');
    }
    expect(await exited, `serve's exit after SIGTERM:\n${out}`).toBe(0);
    expect(readdirSync(join(dir, 'data'))).toContain('gateway.db');
  }, 60_000);
});
