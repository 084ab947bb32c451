// The load generator: wrk (C, one thread, on the load core) with bench/wrk/post.lua, or autocannon when wrk
// is not installed. Both report the same summary: requests, duration, bytes, errors (status >= 400 among
// them) and latency percentiles in microseconds.
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { pinned } from './processes.mjs';

const WRK_SCRIPT = fileURLToPath(new URL('../wrk/post.lua', import.meta.url));
const AUTOCANNON_CHILD = fileURLToPath(new URL('./autocannon-child.mjs', import.meta.url));

export function loadGenerator() {
  if (spawnSync('wrk', ['--version']).error === undefined) return { tool: 'wrk', note: null };
  return { tool: 'autocannon', note: 'wrk not found (apt-get install wrk): using autocannon, which costs more CPU per request on the load core' };
}

/**
 * One load point: `connections` keep-alive connections POSTing `body` for `seconds`. `auth` is a key, a
 * list of keys used in turn, or null; `headers` ({ name: value }) go on every request as well (a peer
 * gateway's routing headers, say). Resolves with the summary; latency figures in milliseconds.
 */
export async function runLoad({ generator, plan, url, body, auth = null, headers = {}, connections, seconds }) {
  const keys = auth === null ? [] : Array.isArray(auth) ? auth : [auth];
  const env = { BENCH_BODY: body, BENCH_AUTH: keys.map((k) => `Bearer ${k}`).join(','), BENCH_HEADERS: headerLines(headers) };
  const cmd =
    generator.tool === 'wrk'
      ? pinned(plan, plan.load ?? null, 'wrk', ['-t1', `-c${connections}`, `-d${seconds}s`, '--timeout', '30s', '-s', WRK_SCRIPT, url])
      : pinned(plan, plan.load ?? null, process.execPath, [AUTOCANNON_CHILD, url, String(connections), String(seconds)]);
  const out = await new Promise((resolve, reject) => {
    const child = spawn(cmd.command, cmd.args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`${generator.tool} failed (${code}):\n${stderr}${stdout}`))));
  });
  const line = out.split('\n').find((l) => l.startsWith('BENCH_JSON '));
  if (!line) throw new Error(`${generator.tool} printed no summary:\n${out}`);
  const s = JSON.parse(line.slice('BENCH_JSON '.length));
  const seconds_ = s.duration_us / 1e6;
  return {
    requests: s.requests,
    rps: s.requests / seconds_,
    seconds: seconds_,
    bytesPerResponse: s.requests > 0 ? Math.round(s.bytes / s.requests) : 0,
    errors: s.errors,
    failed: s.errors.status + s.errors.connect + s.errors.read + s.errors.write + s.errors.timeout,
    p50Ms: s.latency_us.p50 / 1000,
    p90Ms: s.latency_us.p90 / 1000,
    p99Ms: s.latency_us.p99 / 1000,
    maxMs: s.latency_us.max / 1000,
    meanMs: s.latency_us.mean / 1000,
  };
}

/**
 * Extra headers for the load generators' environment, one `name: value` a line: the Lua script has no
 * JSON parser, and a value (a URL) may hold colons or commas but never a newline.
 */
function headerLines(headers) {
  return Object.entries(headers)
    .map(([name, value]) => {
      if (/[\r\n:]/.test(name) || /[\r\n]/.test(value)) throw new Error(`bench header ${name}: no newline, and no colon in the name`);
      return `${name}: ${value}`;
    })
    .join('\n');
}
