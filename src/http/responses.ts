/**
 * POST /v1/responses, GET and DELETE /v1/responses/{id}: the OpenAI Responses door (src/responses/), for the
 * Vercel AI SDK's default `openai(id)`, the openai client's `responses.*`, Codex CLI and LibreChat. The
 * request goes through the shared completion pipeline to any target type.
 *
 * With `store` (OpenAI's default), the finished answer is kept for the retention (30 days by default), per
 * account and environment: a later request may continue it with `previous_response_id`, or name its output
 * items with `item_reference` (the AI SDK does so for every earlier assistant turn). docs/api.md, "Responses".
 */
import { Hono } from 'hono';
import type { AppDeps, AppEnv } from '../core/deps.js';
import type { ChatMessage, ChatRequest } from '../openai/chat-types.js';
import { GatewayError, notFound } from '../openai/errors.js';
import { responseOfItem, RESPONSE_ID_PREFIX } from '../responses/response-ids.js';
import { parseResponsesRequest, type InputItem, type ParsedResponsesRequest, type ResponsesHistory } from '../responses/responses-request.js';
import { assistantTurnOf, renderResponse, type OutputItem, type ResponseFrame, type ResponseObject } from '../responses/responses-response.js';
import { ResponsesStreamEncoder } from '../responses/responses-stream-encoder.js';
import type { ApiKeyRecord } from '../store/types.js';
import { serveCompletion, type CompletionDoor } from './completion-door.js';
import type { DoorRequest } from './door-exchange.js';
import { doorRequestOf, responseOf } from './hono-exchange.js';

/**
 * What one request may pull from storage (earlier conversations, referenced items; each reference counted
 * every time it appears): no more than one request body could carry whole. Without it a cheap request could
 * make the gateway build an unbounded prompt (a fan-out of references to a big item) or grow a stored
 * conversation turn after turn past anything a client could have sent.
 */
function historyOf(deps: AppDeps, key: ApiKeyRecord, bodyBytes: number): ResponsesHistory {
  const store = deps.store.responses;
  const limit = deps.limits.maxBodyBytes;
  // This request's own input counts too: what is stored after it (and continued next) stays within the limit.
  let pulled = bodyBytes;
  const pull = (bytes: number, param: string): void => {
    pulled += bytes;
    if (pulled > limit) {
      throw new GatewayError(
        413,
        'invalid_request_error',
        'conversation_too_large',
        `The conversation this request continues or refers to is larger than one request may be (${limit} bytes); start a new conversation or send fewer earlier turns.`,
        param,
      );
    }
  };
  // One read and one parse per stored response per request, however many of its items the input names.
  const read = new Map<string, Promise<{ conversation: string; items: Map<string, { item: InputItem; bytes: number }> } | null>>();
  const find = (id: string) => {
    let found = read.get(id);
    if (found === undefined) {
      found = store.find(key.accountId, key.environment, id).then((saved) => {
        if (saved === null) return null;
        const items = new Map<string, { item: InputItem; bytes: number }>();
        for (const item of JSON.parse(saved.output) as OutputItem[]) items.set(item.id, { item: item as InputItem, bytes: JSON.stringify(item).length });
        return { conversation: saved.conversation, items };
      });
      read.set(id, found);
    }
    return found;
  };
  return {
    async conversation(responseId) {
      const saved = await find(responseId);
      if (saved === null) return null;
      pull(saved.conversation.length, 'previous_response_id');
      return JSON.parse(saved.conversation) as ChatMessage[];
    },
    async item(id) {
      const responseId = responseOfItem(id);
      if (responseId === null) return null;
      const found = (await find(responseId))?.items.get(id);
      if (found === undefined) return null;
      pull(found.bytes, 'input');
      // Read-only: the translation copies what it keeps (src/responses/responses-request.ts).
      return found.item;
    },
  };
}

function withoutLogprobs(item: OutputItem): OutputItem {
  if (item.type !== 'message') return item;
  return { ...item, content: item.content.map((c) => (c.type === 'output_text' ? { ...c, logprobs: [] } : c)) };
}

/** One request's door: the parsed request is needed again to frame and keep the answer. */
export function responsesDoor(exchange: DoorRequest): CompletionDoor {
  const { deps, key } = exchange;
  const retentionMs = deps.limits.responsesRetentionMs ?? 0;
  let parsed: ParsedResponsesRequest | null = null;
  const frameOf = (id: string, createdAt: number, model: string): ResponseFrame => {
    if (parsed === null) throw new Error('the Responses door framed an answer before parsing its request');
    return { id, createdAt, model, request: parsed, stored: retentionMs > 0 && parsed.body.store !== false };
  };
  const keep = async (response: ResponseObject): Promise<void> => {
    if (parsed === null || !response.store) return;
    const turn = assistantTurnOf(response.output);
    const now = deps.clock.now();
    try {
      await deps.store.responses.save({
        id: response.id,
        accountId: key.accountId,
        environment: key.environment,
        keyId: key.id,
        createdAt: now,
        expiresAt: now + retentionMs,
        conversation: JSON.stringify(turn === null ? parsed.conversation : [...parsed.conversation, turn]),
        // The lookup copy for item_reference: without logprobs, which no input takes back.
        output: JSON.stringify(response.output.map(withoutLogprobs)),
        body: JSON.stringify(response),
      });
    } catch (e) {
      // The answer is paid for and is delivered all the same; only its continuation by id will not be found.
      deps.logger.warn('stored response write failed', { requestId: exchange.requestId, responseId: response.id, error: String(e) });
    }
  };
  return {
    scope: 'responses',
    idPrefix: RESPONSE_ID_PREFIX,
    async parse(body): Promise<ChatRequest> {
      parsed = await parseResponsesRequest(body, historyOf(deps, key, (await exchange.text()).length));
      return parsed.chat;
    },
    encoder: (completion) =>
      new ResponsesStreamEncoder(frameOf(completion.spec.completionId, completion.created, completion.spec.route.entry.id), keep),
    render: (answer) => renderResponse(frameOf(answer.id, answer.created, answer.model), answer),
    keep: (rendered) => keep(rendered as ResponseObject),
  };
}

export const responsesRoutes = new Hono<AppEnv>()
  .post('/', async (c) => {
    const exchange = doorRequestOf(c);
    return responseOf(c, await serveCompletion(exchange, responsesDoor(exchange)));
  })
  .get('/:id', async (c) => {
    const key = c.get('key');
    const saved = await c.get('deps').store.responses.find(key.accountId, key.environment, c.req.param('id'));
    if (saved === null) throw notFound('not_found', `Response with id '${c.req.param('id')}' not found.`, 'response_id');
    return c.body(saved.body, 200, { 'content-type': 'application/json' });
  })
  .delete('/:id', async (c) => {
    const key = c.get('key');
    const id = c.req.param('id');
    if (!(await c.get('deps').store.responses.delete(key.accountId, key.environment, id))) {
      throw notFound('not_found', `Response with id '${id}' not found.`, 'response_id');
    }
    return c.json({ id, object: 'response', deleted: true });
  });
