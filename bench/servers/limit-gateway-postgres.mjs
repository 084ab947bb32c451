#!/usr/bin/env node
// The limit gateway on PostgreSQL: the least a Node metered gateway does per request, with its ledger on the
// database the product's PostgreSQL store uses, so that the product on PostgreSQL is measured against a limit
// on the same database (issue 20: "PostgreSQL: at least 0.5 of the limit gateway on the same database").
// ../shared/bench/limit-gateway.mjs is the SQLite one; this is the same work with the store on PostgreSQL:
//   1. read the body, JSON.parse, check model / messages / temperature / max_tokens / stream by hand;
//   2. authenticate: bearer `svc_live_<12-char id><32-char secret>`, the key row read by primary key,
//      HMAC-SHA256(salt, secret) compared with timingSafeEqual;
//   3. reserve: one durable statement (UPDATE the account's reserved amount guarded by a balance check and
//      INSERT the hold, in one data-modifying CTE: one round trip, its own transaction);
//   4. call the upstream (undici Pool, keep-alive); a non-streaming client is answered from a streamed call
//      whose every SSE event is parsed and whose text is gathered, as the product does; a streaming client is
//      relayed event by event (own id and model), one socket write per upstream read;
//   5. settle: one durable statement (the hold settled, the balance charged, a usage row inserted);
//   6. the OpenAI chat.completion (or the final chunks) with a `svc` metadata object.
// The client gets its answer only after the settle is committed. Each statement commits on its own with the
// server's synchronous_commit, as the product's ledger functions do; the pool has the product's default size
// (10 connections), and every connection is named --schema in pg_stat_activity so the bench can pin them.
// The ledger's statements are in bench/lib/limit-ledger-postgres.mjs (bench/store-ops.mjs measures them too).
//
//   node bench/servers/limit-gateway-postgres.mjs --upstream-port N --url postgres://... --schema NAME
//        [--port 0] [--upstream-model svc-fast] [--pool 10]
// The schema is created, and seeded with one account (10^15 credits) and one key, when it has no tables;
// dropping it is the caller's (bench/lib/targets.mjs). Prints {"ready":true,"port":N,"key":"svc_live_..."}.
import http from 'node:http';
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { parseArgs } from 'node:util';
import { StringDecoder } from 'node:string_decoder';
import { Pool } from 'undici';
import { openLimitLedger } from '../lib/limit-ledger-postgres.mjs';

const { values: opt } = parseArgs({
  options: {
    'upstream-port': { type: 'string' },
    'upstream-model': { type: 'string', default: 'svc-fast' },
    port: { type: 'string', default: '0' },
    url: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/test' },
    schema: { type: 'string' },
    pool: { type: 'string', default: '10' },
  },
});
const UPSTREAM_PORT = Number(opt['upstream-port']);
if (!Number.isInteger(UPSTREAM_PORT) || UPSTREAM_PORT <= 0 || !/^[a-z_][a-z0-9_]{0,62}$/.test(opt.schema ?? '')) {
  process.stderr.write('usage: limit-gateway-postgres.mjs --upstream-port N --schema NAME [options]; see the header\n');
  process.exit(2);
}

// ---------------------------------------------------------------------------------------------- store
const ledger = await openLimitLedger(opt.url, opt.schema, { pool: Number(opt.pool) });

// ---------------------------------------------------------------------------------------------- upstream
const UPSTREAM_PATH = '/v1/chat/completions';
const pool = new Pool(`http://127.0.0.1:${UPSTREAM_PORT}`, { connections: null, pipelining: 1 });
const UPSTREAM_HEADERS = { 'content-type': 'application/json' };
/** (payload, h: { head(status), data(str), end(), error(err) }) => abort() */
function callUpstream(payload, h) {
  let body = null;
  pool.request({ path: UPSTREAM_PATH, method: 'POST', headers: UPSTREAM_HEADERS, body: payload }).then((r) => {
    body = r.body;
    h.head(r.statusCode);
    const dec = new StringDecoder('utf8');
    body.on('data', (b) => h.data(dec.write(b)));
    body.on('end', h.end);
    body.on('error', h.error);
  }, h.error);
  return () => body?.destroy();
}

/** An SSE reader: push(text) calls onEvent(data) for each complete event's data. */
function sseReader(onEvent) {
  let buf = '';
  return (text) => {
    buf = buf.length === 0 ? text : buf + text;
    if (buf.indexOf('\r') !== -1) buf = buf.replace(/\r\n?/g, '\n');
    let start = 0;
    let end;
    while ((end = buf.indexOf('\n\n', start)) !== -1) {
      const ev = buf.slice(start, end);
      start = end + 2;
      if (ev.startsWith('data: ') && ev.indexOf('\n') === -1) {
        onEvent(ev.slice(6));
        continue;
      }
      let data = null;
      for (const line of ev.split('\n')) {
        if (line.startsWith('data:')) {
          const v = line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5);
          data = data === null ? v : data + '\n' + v;
        }
      }
      if (data !== null) onEvent(data);
    }
    buf = start === 0 ? buf : buf.slice(start);
  };
}

// ---------------------------------------------------------------------------------------------- request
const ROUTE = { provider: 'up', model: opt['upstream-model'], routed: `up/${opt['upstream-model']}` };
const ALIASES = new Set(['svc-fast', 'svc-code', 'svc-smart']);
const MAX_BODY = 4 * 1024 * 1024;
const DEFAULT_MAX_TOKENS = 4096;
const KEY_PREFIX = 'Bearer svc_live_';
const KEY_LEN = KEY_PREFIX.length + 12 + 32;
const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };

function fail(res, status, type, message) {
  const s = JSON.stringify({ error: { message, type, param: null, code: null } });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(s) });
  res.end(s);
}

/** Hand-written checks; returns the prompt's character count, or an error message (string). */
function validate(b) {
  if (b === null || typeof b !== 'object' || Array.isArray(b)) return 'body must be a JSON object';
  if (typeof b.model !== 'string') return 'model must be a string';
  const m = b.messages;
  if (!Array.isArray(m) || m.length === 0) return 'messages must be a non-empty array';
  let chars = 0;
  for (let i = 0; i < m.length; i++) {
    const x = m[i];
    if (x === null || typeof x !== 'object') return `messages[${i}] must be an object`;
    const r = x.role;
    if (r !== 'user' && r !== 'system' && r !== 'assistant' && r !== 'developer' && r !== 'tool') return `messages[${i}].role is invalid`;
    const c = x.content;
    if (typeof c === 'string') chars += c.length;
    else if (Array.isArray(c)) {
      for (const p of c) {
        if (p === null || typeof p !== 'object' || typeof p.type !== 'string') return `messages[${i}].content part is invalid`;
        if (typeof p.text === 'string') chars += p.text.length;
      }
    } else if (!(c === null && r === 'assistant')) return `messages[${i}].content must be a string or an array`;
  }
  const t = b.temperature;
  if (t !== undefined && t !== null && (typeof t !== 'number' || !(t >= 0 && t <= 2))) return 'temperature must be a number in [0, 2]';
  const mt = b.max_tokens;
  if (mt !== undefined && mt !== null && (!Number.isInteger(mt) || mt < 1)) return 'max_tokens must be a positive integer';
  if (b.stream !== undefined && typeof b.stream !== 'boolean') return 'stream must be a boolean';
  return chars;
}

async function handle(req, res, buf, startedAt) {
  const auth = req.headers.authorization;
  if (typeof auth !== 'string' || auth.length !== KEY_LEN || !auth.startsWith(KEY_PREFIX)) {
    return fail(res, 401, 'invalid_request_error', 'invalid API key');
  }
  let body;
  try {
    body = JSON.parse(buf.toString('utf8'));
  } catch {
    return fail(res, 400, 'invalid_request_error', 'body is not valid JSON');
  }
  const chars = validate(body);
  if (typeof chars === 'string') return fail(res, 400, 'invalid_request_error', chars);
  if (!ALIASES.has(body.model)) return fail(res, 404, 'invalid_request_error', `model ${body.model} does not exist`);

  const keyId = auth.slice(KEY_PREFIX.length, KEY_PREFIX.length + 12);
  const row = await ledger.findKey(keyId);
  if (row === undefined || row.revoked) return fail(res, 401, 'invalid_request_error', 'invalid API key');
  const mac = createHmac('sha256', row.salt).update(auth.slice(KEY_PREFIX.length + 12)).digest();
  if (!timingSafeEqual(mac, row.hash)) return fail(res, 401, 'invalid_request_error', 'invalid API key');

  const maxTokens = body.max_tokens ?? DEFAULT_MAX_TOKENS;
  const promptEstimate = Math.ceil(chars / 4) + 4 * body.messages.length;
  const amount = promptEstimate + maxTokens;
  const holdId = await ledger.reserve(row.account_id, keyId, amount);
  if (holdId === null) return fail(res, 402, 'insufficient_quota', 'not enough credits');
  const hold = { id: holdId, accountId: row.account_id, keyId, amount };

  const up = { model: ROUTE.model, messages: body.messages, stream: true, stream_options: { include_usage: true } };
  if (body.temperature != null) up.temperature = body.temperature;
  if (body.max_tokens != null) up.max_tokens = body.max_tokens;
  const ctx = { res, body, hold, startedAt, promptEstimate, id: 'chatcmpl-' + randomUUID(), created: Math.floor(startedAt / 1000) };
  return body.stream === true ? streaming(ctx, JSON.stringify(up)) : nonStreaming(ctx, JSON.stringify(up));
}

function svcMeta(ctx, charged, available, prompt, completion) {
  return {
    requested_model: ctx.body.model,
    routed_model: ROUTE.routed,
    routed_provider: ROUTE.provider,
    credits_used: charged,
    balance_remaining: available,
    tokens_metered: { prompt, completion, total: prompt + completion },
    latency_ms: Date.now() - ctx.startedAt,
  };
}

async function upstreamFailed(ctx, status, detail) {
  await ledger.void(ctx.hold);
  if (!ctx.res.headersSent) fail(ctx.res, 502, 'upstream_error', `upstream failed (${status}): ${String(detail).slice(0, 200)}`);
  else ctx.res.end();
}

async function settle(ctx, prompt, completion) {
  const charged = prompt + completion;
  const available = await ledger.settle(ctx.hold, charged, { model: ctx.body.model, routed: ROUTE.routed, prompt, completion });
  return { charged, available };
}

/** Non-streaming client: the upstream stream gathered event by event. */
function nonStreaming(ctx, payload) {
  let status = 0;
  let text = '';
  let content = '';
  let finish = null;
  let usage = null;
  let deltas = 0;
  const read = sseReader((data) => {
    if (data === '[DONE]') return;
    const e = JSON.parse(data);
    const ch = e.choices?.[0];
    if (ch !== undefined) {
      const c = ch.delta?.content;
      if (c) {
        content += c;
        deltas++;
      }
      if (ch.finish_reason) finish = ch.finish_reason;
    }
    if (e.usage) usage = e.usage;
  });
  callUpstream(payload, {
    head(s) {
      status = s;
    },
    data(s) {
      if (status !== 200) text += s;
      else read(s);
    },
    error(err) {
      upstreamFailed(ctx, status, err?.message ?? err).catch(() => {});
    },
    end() {
      if (status !== 200) return void upstreamFailed(ctx, status, text).catch(() => {});
      const prompt = usage?.prompt_tokens ?? ctx.promptEstimate;
      const completion = usage?.completion_tokens ?? deltas;
      settle(ctx, prompt, completion).then(({ charged, available }) => {
        const answer = {
          id: ctx.id,
          object: 'chat.completion',
          created: ctx.created,
          model: ctx.body.model,
          choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, finish_reason: finish }],
          usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
          svc: svcMeta(ctx, charged, available, prompt, completion),
        };
        const s = JSON.stringify(answer);
        ctx.res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(s) });
        ctx.res.end(s);
      }, (err) => fail(ctx.res, 500, 'api_error', `ledger: ${err.message}`));
    },
  });
}

/** Streaming client: every upstream event re-framed as our chunk; usage, svc and [DONE] after the settle. */
function streaming(ctx, payload) {
  const { res } = ctx;
  const withUsage = ctx.body.stream_options?.include_usage === true;
  let status = 0;
  let errText = '';
  let deltas = 0;
  let usage = null;
  let out = '';
  let ended = false;
  const head = `data: {"id":"${ctx.id}","object":"chat.completion.chunk","created":${ctx.created},"model":${JSON.stringify(ctx.body.model)},"choices":[`;
  const tail = withUsage ? '],"usage":null}\n\n' : ']}\n\n';
  const read = sseReader((data) => {
    if (data === '[DONE]') return;
    const e = JSON.parse(data);
    if (e.usage) usage = e.usage;
    const ch = e.choices?.[0];
    if (ch === undefined) return;
    if (ch.delta?.content) deltas++;
    out += head + JSON.stringify({ index: 0, delta: ch.delta ?? {}, finish_reason: ch.finish_reason ?? null }) + tail;
  });
  const finish = async (how) => {
    if (ended) return;
    ended = true;
    const prompt = how === 'completed' && usage ? usage.prompt_tokens : ctx.promptEstimate;
    const completion = how === 'completed' && usage ? usage.completion_tokens : deltas;
    const { charged, available } = await settle(ctx, prompt, completion);
    if (how === 'client_closed') return;
    const base = `{"id":"${ctx.id}","object":"chat.completion.chunk","created":${ctx.created},"model":${JSON.stringify(ctx.body.model)},"choices":[],`;
    let last = '';
    if (withUsage) last += `data: ${base}"usage":${JSON.stringify({ prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion })}}\n\n`;
    last += `data: ${base}"svc":${JSON.stringify(svcMeta(ctx, charged, available, prompt, completion))}}\n\n`;
    if (how === 'upstream_error') last += 'data: {"error":{"message":"upstream stream failed","type":"upstream_error","param":null,"code":"upstream_stream_error"}}\n\n';
    res.end(last + 'data: [DONE]\n\n');
  };
  const abort = callUpstream(payload, {
    head(s) {
      status = s;
      if (s === 200) res.writeHead(200, SSE_HEADERS);
    },
    data(s) {
      if (status !== 200) return void (errText += s);
      read(s);
      if (out.length > 0 && !ended) {
        res.write(out);
        out = '';
      }
    },
    error(err) {
      if (status === 200 && deltas > 0) finish('upstream_error').catch(() => res.destroy());
      else if (!ended) {
        ended = true;
        upstreamFailed(ctx, status, err?.message ?? err).catch(() => {});
      }
    },
    end() {
      if (status !== 200) {
        ended = true;
        return void upstreamFailed(ctx, status, errText).catch(() => {});
      }
      finish('completed').catch(() => res.destroy());
    },
  });
  res.once('close', () => {
    if (!ended && status === 200) {
      abort();
      finish('client_closed').catch(() => {});
    }
  });
}

const server = http.createServer((req, res) => {
  if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
    req.resume();
    return fail(res, 404, 'invalid_request_error', 'not found');
  }
  const startedAt = Date.now();
  if (Number(req.headers['content-length'] ?? 0) > MAX_BODY) {
    req.resume();
    return fail(res, 413, 'invalid_request_error', 'body too large');
  }
  const chunks = [];
  let size = 0;
  req.on('data', (c) => {
    size += c.length;
    if (size <= MAX_BODY) chunks.push(c);
  });
  req.on('end', () => {
    if (size > MAX_BODY) return fail(res, 413, 'invalid_request_error', 'body too large');
    handle(req, res, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks), startedAt).catch((err) => {
      if (!res.headersSent) fail(res, 500, 'api_error', err.message);
      else res.destroy();
    });
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(opt.port), '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ ready: true, port: server.address().port, key: ledger.seededKey, options: opt }) + '\n');
});
const stop = () => {
  server.close(() => {
    ledger.end().finally(() => process.exit(0));
  });
  server.closeAllConnections();
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
