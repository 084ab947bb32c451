/**
 * POST /v1/responses, GET and DELETE /v1/responses/{id}: the OpenAI Responses door (src/responses/), for the
 * Vercel AI SDK's default `openai(id)`, the openai client's `responses.*`, Codex CLI and LibreChat. The
 * request goes through the shared completion pipeline to any target type.
 *
 * With `store` (OpenAI's default), the finished answer is kept for the retention (30 days by default), per
 * account and environment: a later request may continue it with `previous_response_id`, or name its output
 * items with `item_reference` (the AI SDK does so for every earlier assistant turn). docs/api.md, "Responses".
 */
import { Hono, type Context } from 'hono';
import type { AppEnv } from '../core/deps.js';
import type { ChatMessage, ChatRequest } from '../openai/chat-types.js';
import { invalidRequest, notFound } from '../openai/errors.js';
import { responseOfItem, RESPONSE_ID_PREFIX } from '../responses/response-ids.js';
import { parseResponsesRequest, type InputItem, type ParsedResponsesRequest, type ResponsesHistory } from '../responses/responses-request.js';
import { assistantTurnOf, renderResponse, type OutputItem, type ResponseFrame, type ResponseObject } from '../responses/responses-response.js';
import { ResponsesStreamEncoder } from '../responses/responses-stream-encoder.js';
import type { ApiKeyRecord, SavedResponse } from '../store/types.js';
import { serveCompletion, type CompletionDoor } from './completion-door.js';

/** Distinct stored responses one request may read (item_reference and previous_response_id together). */
const MAX_RESPONSES_READ = 1000;

function historyOf(c: Context<AppEnv>, key: ApiKeyRecord): ResponsesHistory {
  const store = c.get('deps').store.responses;
  // One read per stored response per request, however many of its items the input names.
  const read = new Map<string, Promise<SavedResponse | null>>();
  const find = (id: string): Promise<SavedResponse | null> => {
    let found = read.get(id);
    if (found === undefined) {
      if (read.size >= MAX_RESPONSES_READ) {
        throw invalidRequest(`The input refers to more than ${MAX_RESPONSES_READ} stored responses; send earlier turns as items instead.`, 'input', 'too_many_references');
      }
      found = store.find(key.accountId, key.environment, id);
      read.set(id, found);
    }
    return found;
  };
  const outputs = new Map<string, OutputItem[]>();
  return {
    async conversation(responseId) {
      const saved = await find(responseId);
      return saved === null ? null : (JSON.parse(saved.conversation) as ChatMessage[]);
    },
    async item(id) {
      const responseId = responseOfItem(id);
      if (responseId === null) return null;
      const saved = await find(responseId);
      if (saved === null) return null;
      let output = outputs.get(responseId);
      if (output === undefined) {
        output = JSON.parse(saved.output) as OutputItem[];
        outputs.set(responseId, output);
      }
      const item = output.find((i) => i.id === id);
      // A kept output item is also a valid input item (OpenAI's own rule): it goes through the same translation.
      return item === undefined ? null : (structuredClone(item) as InputItem);
    },
  };
}

/** One request's door: the parsed request is needed again to frame and keep the answer. */
function responsesDoor(c: Context<AppEnv>): CompletionDoor {
  const deps = c.get('deps');
  const key = c.get('key');
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
        output: JSON.stringify(response.output),
        body: JSON.stringify(response),
      });
    } catch (e) {
      // The answer is paid for and is delivered all the same; only its continuation by id will not be found.
      deps.logger.warn('stored response write failed', { requestId: c.get('requestId'), responseId: response.id, error: String(e) });
    }
  };
  return {
    scope: 'responses',
    idPrefix: RESPONSE_ID_PREFIX,
    async parse(body): Promise<ChatRequest> {
      parsed = await parseResponsesRequest(body, historyOf(c, key));
      return parsed.chat;
    },
    encoder: (completion) =>
      new ResponsesStreamEncoder(frameOf(completion.spec.completionId, completion.created, completion.spec.route.entry.id), keep),
    render: (answer) => renderResponse(frameOf(answer.id, answer.created, answer.model), answer),
    keep: (rendered) => keep(rendered as ResponseObject),
  };
}

export const responsesRoutes = new Hono<AppEnv>()
  .post('/', (c) => serveCompletion(c, responsesDoor(c)))
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
