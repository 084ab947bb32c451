/**
 * POST /v1/messages and /v1/messages/count_tokens: the Anthropic Messages door (src/anthropic/), for Claude
 * Code, the Anthropic SDKs and Continue's Anthropic provider. The key comes as `x-api-key` or Bearer; the
 * model is one of our aliases; the request goes through the shared completion pipeline to any target type.
 */
import { Hono } from 'hono';
import { parseMessagesRequest } from '../anthropic/messages-request.js';
import { renderMessage } from '../anthropic/messages-response.js';
import { MessagesStreamEncoder } from '../anthropic/messages-stream-encoder.js';
import { quoteRequest } from '../billing/quote.js';
import type { AppEnv } from '../core/deps.js';
import { notFound } from '../openai/errors.js';
import { ALIASES, isAlias } from '../routing/catalog.js';
import { resolveRoute } from '../routing/router.js';
import { serveCompletion, type CompletionDoor } from './completion-door.js';
import { doorRequestOf, responseOf } from './hono-exchange.js';
import { readJson } from './json-body.js';

export const messagesDoor: CompletionDoor = {
  parse: parseMessagesRequest,
  scope: 'messages',
  idPrefix: 'msg_',
  encoder: (completion) => new MessagesStreamEncoder(completion.spec.completionId, completion.spec.route.entry.id, completion.spec.quote.promptTokens),
  render: renderMessage,
};

export const messagesRoutes = new Hono<AppEnv>()
  .post('/', async (c) => responseOf(c, await serveCompletion(doorRequestOf(c), messagesDoor)))
  // The prompt as the gateway counts it for its hold (the route's largest estimate): what it charges at most
  // for the input, as Anthropic's endpoint gives what Claude would count. `max_tokens` is not needed here.
  .post('/count_tokens', async (c) => {
    const body = await readJson(c);
    const request = parseMessagesRequest({ ...body, max_tokens: 1 });
    if (!isAlias(request.model)) {
      throw notFound('model_not_found', `The model '${request.model}' does not exist. Available models: ${ALIASES.join(', ')}.`, 'model');
    }
    const deps = c.get('deps');
    const route = resolveRoute(deps.routing, request.model, c.get('key').environment, request);
    const quote = await quoteRequest(route, request, { mediaUrlMaxTokens: deps.limits.mediaUrlMaxTokens });
    return c.json({ input_tokens: quote.promptTokens });
  });
