// autocannon in its own process (pinned like wrk would be), printing wrk's BENCH_JSON summary line.
// Run by load.mjs: node autocannon-child.mjs URL CONNECTIONS SECONDS, body, auth and extra headers (one
// "name: value" a line) in the environment.
import autocannon from 'autocannon';

const [url, connections, seconds] = process.argv.slice(2);
const auths = (process.env.BENCH_AUTH ?? '').split(',').filter(Boolean);
const headers = { 'content-type': 'application/json' };
for (const line of (process.env.BENCH_HEADERS ?? '').split('\n')) {
  const colon = line.indexOf(':');
  if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
}
if (auths.length > 0) headers.authorization = auths[0];
const r = await autocannon({
  url,
  method: 'POST',
  body: process.env.BENCH_BODY,
  headers,
  // Several keys: each connection sends them in turn, as the wrk script does.
  ...(auths.length > 1 ? { requests: auths.map((authorization) => ({ headers: { ...headers, authorization } })) } : {}),
  connections: Number(connections),
  duration: Number(seconds),
  timeout: 30,
});
const us = (ms) => Math.round(ms * 1000);
const summary = {
  requests: r.requests.total,
  duration_us: Math.round(r.duration * 1e6),
  bytes: r.throughput.total,
  // Like wrk, non-2xx answers count as status errors (autocannon counts 3xx there too).
  errors: { connect: r.errors - r.timeouts, read: 0, write: 0, status: r.non2xx, timeout: r.timeouts },
  latency_us: { p50: us(r.latency.p50), p90: us(r.latency.p90), p99: us(r.latency.p99), max: us(r.latency.max), mean: r.latency.mean * 1000 },
};
process.stdout.write(`BENCH_JSON ${JSON.stringify(summary)}\n`);
