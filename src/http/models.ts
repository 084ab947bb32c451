import { Hono } from 'hono';
import type { AppEnv } from '../core/deps.js';
import { notFound } from '../openai/errors.js';
import { ALIASES, CATALOG, isAlias, type CatalogEntry } from '../routing/catalog.js';

/** Fixed so that the listing is stable across restarts (OpenAI clients display it). */
const CATALOG_CREATED = 1767225600; // 2026-01-01T00:00:00Z

function modelObject(e: CatalogEntry): Record<string, unknown> {
  return {
    id: e.id,
    object: 'model',
    created: CATALOG_CREATED,
    owned_by: 'svc-gateway',
    name: e.name,
    context_window: e.contextWindow,
    pricing: { input_credits_per_1k: e.inputCreditsPer1k, output_credits_per_1k: e.outputCreditsPer1k },
    description: e.description,
  };
}

const LIST = { object: 'list', data: ALIASES.map((a) => modelObject(CATALOG[a])) };

export const modelsRoutes = new Hono<AppEnv>()
  .get('/', (c) => c.json(LIST))
  .get('/:id', (c) => {
    const id = c.req.param('id');
    if (!isAlias(id)) {
      throw notFound('model_not_found', `The model '${id}' does not exist. Available models: ${ALIASES.join(', ')}.`, 'model');
    }
    return c.json(modelObject(CATALOG[id]));
  });
