/** POST /v1/completions: the legacy completions door, served by the alias's chat targets (src/openai/legacy-completions.ts). */
import { Hono } from 'hono';
import type { AppEnv } from '../core/deps.js';
import { parseLegacyRequest, renderTextCompletion } from '../openai/legacy-completions.js';
import { LegacyStreamEncoder } from '../openai/legacy-stream-encoder.js';
import { serveCompletion, type CompletionDoor } from './completion-door.js';
import { doorRequestOf, responseOf } from './hono-exchange.js';

export const legacyDoor: CompletionDoor = {
  parse: parseLegacyRequest,
  scope: 'completions',
  idPrefix: 'cmpl-',
  encoder: (completion) =>
    new LegacyStreamEncoder(completion.spec.completionId, completion.created, completion.spec.route.entry.id, completion.spec.request.include_usage),
  render: renderTextCompletion,
};

export const completionsRoutes = new Hono<AppEnv>().post('/', async (c) => responseOf(c, await serveCompletion(doorRequestOf(c), legacyDoor)));
