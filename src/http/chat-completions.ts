/** POST /v1/chat/completions: the chat door (docs/api.md). */
import { Hono } from 'hono';
import type { AppEnv } from '../core/deps.js';
import { parseChatRequest } from '../openai/chat-request.js';
import { serveCompletion, type CompletionDoor } from './completion-door.js';
import { doorRequestOf, responseOf } from './hono-exchange.js';

export const chatDoor: CompletionDoor = { parse: parseChatRequest, idPrefix: 'chatcmpl-', render: (answer) => answer };

export const chatCompletionsRoutes = new Hono<AppEnv>().post('/', async (c) => responseOf(c, await serveCompletion(doorRequestOf(c), chatDoor)));
