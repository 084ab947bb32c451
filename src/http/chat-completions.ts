import { Hono } from 'hono';
import { Meter } from '../billing/meter.js';
import { quoteRequest } from '../billing/quote.js';
import type { CompletionContext } from '../completions/context.js';
import { completeNonStreaming } from '../completions/non-streaming.js';
import { startStreaming } from '../completions/streaming.js';
import { SSE_HEADERS } from '../streaming/sse-encode.js';
import type { AppEnv } from '../core/deps.js';
import { newId, newTimeOrderedId } from '../core/ids.js';
import { parseChatRequest } from '../openai/chat-request.js';
import { notFound } from '../openai/errors.js';
import { ALIASES, isAlias } from '../routing/catalog.js';
import { resolveRoute } from '../routing/router.js';
import { readJson } from './json-body.js';
import { parseQualityBiasHeader, QUALITY_BIAS_HEADER } from './quality-bias-header.js';

export const chatCompletionsRoutes = new Hono<AppEnv>().post('/', async (c) => {
  const deps = c.get('deps');
  const startedAt = deps.clock.now();
  const request = parseChatRequest(await readJson(c));
  if (!isAlias(request.model)) {
    throw notFound(
      'model_not_found',
      `The model '${request.model}' does not exist. Available models: ${ALIASES.join(', ')}.`,
      'model',
    );
  }
  const qualityBias = parseQualityBiasHeader(c.req.header(QUALITY_BIAS_HEADER));
  const key = c.get('key');
  const route = resolveRoute(deps.routing, request.model, key.environment, request, qualityBias);
  const quote = quoteRequest(route.entry, route.defaultMaxTokens, request);
  const meter = await Meter.open(deps.store.ledger, {
    holdId: newTimeOrderedId('hold_'),
    keyId: key.id,
    accountId: key.accountId,
    environment: key.environment,
    amount: quote.worstCaseCredits,
    leaseMs: deps.limits.holdLeaseMs,
  });
  const ctx: CompletionContext = {
    clock: deps.clock,
    key,
    request,
    requestId: c.get('requestId'),
    completionId: newId('chatcmpl-'),
    created: Math.floor(startedAt / 1000),
    startedAt,
    route,
    quote,
    meter,
    clientSignal: c.req.raw.signal,
    requestDeadlineAt: Date.now() + deps.limits.requestTimeoutMs,
    keepaliveMs: deps.limits.keepaliveMs,
  };
  try {
    if (request.stream) {
      const body = await startStreaming(ctx);
      return new Response(body, { headers: { ...SSE_HEADERS, 'x-request-id': ctx.requestId } });
    }
    return c.json(await completeNonStreaming(ctx));
  } catch (e) {
    // Whatever went wrong before the answer left, the hold must not outlive the request (void is idempotent).
    await meter.void();
    throw e;
  }
});
