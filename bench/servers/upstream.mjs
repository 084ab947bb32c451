#!/usr/bin/env node
// The upstream of every bench target: the sandbox provider over real HTTP, instant (no simulated time to
// first token, no token pacing), so what is measured is the proxy in front of it, not the model.
//
//   node bench/servers/upstream.mjs [--port N] [--mode sandbox|replay]
//
// - sandbox: the sandbox HTTP server itself (startSandboxServer), simulating every answer.
// - replay (the bench's default): the sandbox's own answer to each distinct request body, computed once by
//   the sandbox app and then written back byte for byte, frame by frame (one write per SSE frame, as the
//   sandbox does), by a bare node:http server. On the bench's two cores the upstream shares the load
//   generator's core; simulating every answer there costs more CPU per request than the floor proxy
//   spends, so the floor would measure the upstream rather than itself. Replay keeps the same bytes on the
//   wire (only the ids repeat) at a fraction of the cost; `--mode sandbox` is there to check that claim.
//
// Prints one JSON line {"ready":true,"port":N,"mode":...} once it listens.
import http from 'node:http';
import { parseArgs } from 'node:util';
import { createSandboxApp } from '../../dist/providers/sandbox/http-app.js';
import { startSandboxServer } from '../../dist/runtime/node/sandbox-server.js';

const INSTANT = { timeToFirstTokenMs: 0, tokensPerSecond: 0 };
/** Distinct bodies remembered; the bench sends a handful, so this only bounds a misuse. */
const MAX_RECORDED = 256;

const { values } = parseArgs({ options: { port: { type: 'string', default: '0' }, mode: { type: 'string', default: 'replay' } } });
const port = Number(values.port);

async function startReplay() {
  const { app } = createSandboxApp({ pace: INSTANT });
  const recorded = new Map();

  /** The sandbox's answer to this body, as the status, content type and the frames its body yielded. */
  async function answerOf(body) {
    const known = recorded.get(body);
    if (known) return known;
    const res = await app.fetch(
      new Request('http://sandbox/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body }),
    );
    const frames = [];
    if (res.body) for await (const chunk of res.body) frames.push(Buffer.from(chunk));
    const answer = { status: res.status, contentType: res.headers.get('content-type') ?? 'application/json', frames };
    // Only successful answers are replayed: an error may depend on the server's fault state.
    if (res.status === 200 && recorded.size < MAX_RECORDED) recorded.set(body, answer);
    return answer;
  }

  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      answerOf(Buffer.concat(chunks).toString('utf8')).then(
        ({ status, contentType, frames }) => {
          const streamed = contentType.startsWith('text/event-stream');
          const headers = { 'content-type': contentType };
          if (!streamed) headers['content-length'] = frames.reduce((n, f) => n + f.length, 0);
          else headers['cache-control'] = 'no-cache';
          res.writeHead(status, headers);
          for (const frame of frames) res.write(frame);
          res.end();
        },
        (err) => {
          res.writeHead(500, { 'content-type': 'text/plain' });
          res.end(String(err));
        },
      );
    });
  });
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    port: server.address().port,
    close: () => new Promise((resolve) => server.close(resolve) && server.closeAllConnections()),
  };
}

const server = values.mode === 'sandbox' ? await startSandboxServer({ port, pace: INSTANT }) : await startReplay();
process.stdout.write(JSON.stringify({ ready: true, port: server.port, mode: values.mode }) + '\n');
const stop = () => server.close().finally(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
