#!/usr/bin/env node
// One POST route answering a fixed 0.5 KB JSON after reading a JSON body, served in one of several ways, to
// price what the web framework adds per request (bench/http-framework.mjs). Prints {"ready":true,"port":N}.
//   node bench/servers/http-variants.mjs VARIANT
// node-http: node:http alone. hono: Hono on @hono/node-server, the handler reading the body as text.
// hono-header, hono-signal, hono-json: hono plus one thing the gateway does (read a request header, touch
// the request's abort signal, read the body with c.req.json()). hono-after: a middleware that sets a
// header after `await next()`, which makes Hono rebuild the response (the pattern to avoid).
import http from 'node:http';
import { Hono } from 'hono';
import { createAdaptorServer } from '@hono/node-server';

const variant = process.argv[2] ?? 'node-http';
const answer = JSON.stringify({ id: 'chatcmpl-x', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'x'.repeat(400) } }] });
const JSON_TYPE = { 'content-type': 'application/json' };

function honoApp() {
  const app = new Hono({ strict: false });
  if (variant === 'hono-after') {
    app.use('*', async (c, next) => {
      await next();
      c.header('x-request-id', 'req_1');
    });
  }
  app.post('/v1/chat/completions', async (c) => {
    if (variant === 'hono-header' && c.req.header('authorization') === undefined) return c.text('no key', 401);
    if (variant === 'hono-signal' && c.req.raw.signal.aborted) return c.text('gone', 499);
    const body = variant === 'hono-json' ? await c.req.json() : JSON.parse(await c.req.text());
    if (typeof body !== 'object') return c.text('bad', 400);
    return c.body(answer, 200, JSON_TYPE);
  });
  return app;
}

let server;
if (variant === 'node-http') {
  server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString());
      res.writeHead(typeof body === 'object' ? 200 : 400, JSON_TYPE);
      res.end(answer);
    });
  });
} else if (variant.startsWith('hono')) {
  server = createAdaptorServer({ fetch: honoApp().fetch });
} else {
  process.stderr.write(`unknown variant ${variant}\n`);
  process.exit(2);
}
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ ready: true, port: server.address().port })}\n`));
// Exit on a signal (so that --cpu-prof writes its profile).
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(0));
