import { Hono } from 'hono';
import type { AppEnv } from '../core/deps.js';
import type { EmbeddingRoute } from '../embeddings/embedding-routes.js';
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

/** An embedding alias of the config: listed after the four chat aliases, only when one is configured. */
function embeddingModelObject(route: EmbeddingRoute): Record<string, unknown> {
  return {
    id: route.alias,
    object: 'model',
    created: CATALOG_CREATED,
    owned_by: 'svc-gateway',
    name: route.alias,
    pricing: { input_credits_per_1k: route.creditsPer1kTokens, output_credits_per_1k: 0 },
    description: route.description,
  };
}

export const modelsRoutes = new Hono<AppEnv>()
  .get('/', (c) => {
    const embeddings = c.get('deps').embeddings;
    if (embeddings === undefined || embeddings.size === 0) return c.json(LIST);
    return c.json({ object: 'list', data: [...LIST.data, ...[...embeddings.values()].map(embeddingModelObject)] });
  })
  .get('/:id', (c) => {
    const id = c.req.param('id');
    const embedding = c.get('deps').embeddings?.get(id);
    if (embedding !== undefined) return c.json(embeddingModelObject(embedding));
    if (!isAlias(id)) {
      throw notFound('model_not_found', `The model '${id}' does not exist. Available models: ${ALIASES.join(', ')}.`, 'model');
    }
    return c.json(modelObject(CATALOG[id]));
  });
