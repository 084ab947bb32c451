#!/usr/bin/env node
// The floor: the least a Node pass-through proxy can do on the same path, with nothing of the gateway's
// work (no auth, no parsing, no metering, no ledger). It reads the client's body, forwards it unchanged to
// the upstream on a keep-alive connection pool, and pipes the answer back as it arrives (so a streamed
// answer stays streamed). Every gateway figure of the bench is reported as a ratio to this one, measured
// in the same run on the same core.
// Prints {"ready":true,"port":N} once it listens. Run: node bench/servers/floor-proxy.mjs UPSTREAM_PORT [port]
import http from 'node:http';

const upstreamPort = Number(process.argv[2]);
if (!Number.isInteger(upstreamPort) || upstreamPort <= 0) {
  process.stderr.write('usage: floor-proxy.mjs UPSTREAM_PORT [PORT]\n');
  process.exit(2);
}
// Unbounded pool, as undici's (the gateway's fetch) is: one upstream connection per concurrent request.
const agent = new http.Agent({ keepAlive: true });

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const upstream = http.request(
      {
        host: '127.0.0.1',
        port: upstreamPort,
        method: req.method,
        path: req.url,
        agent,
        headers: { 'content-type': req.headers['content-type'] ?? 'application/json', 'content-length': body.length },
      },
      (answer) => {
        const headers = { 'content-type': answer.headers['content-type'] ?? 'application/octet-stream' };
        if (answer.headers['content-length'] !== undefined) headers['content-length'] = answer.headers['content-length'];
        res.writeHead(answer.statusCode ?? 502, headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end('upstream error');
    });
    upstream.end(body);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.argv[3] ?? 0), '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ ready: true, port: server.address().port }) + '\n');
});
const stop = () => server.close(() => process.exit(0)) && server.closeAllConnections();
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
