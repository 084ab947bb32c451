import { Hono } from 'hono';
import type { AppEnv } from '../core/deps.js';
import { invalidRequest } from '../openai/errors.js';
import { ALIASES, isAlias } from '../routing/catalog.js';
import { resolvePeriod } from '../usage/period.js';
import { usageReport } from '../usage/report.js';

const PARAMS = new Set(['start_date', 'end_date', 'model']);

export const usageRoutes = new Hono<AppEnv>().get('/', async (c) => {
  const { store, clock } = c.get('deps');
  const key = c.get('key');
  const q = c.req.query();
  for (const name of Object.keys(q)) {
    if (!PARAMS.has(name)) throw invalidRequest(`Unknown query parameter '${name}'.`, name, 'unrecognized_argument');
  }
  const period = resolvePeriod(q.start_date, q.end_date, clock.now());
  const model = q.model ?? null;
  const embeddingAliases = [...(c.get('deps').embeddings?.keys() ?? [])];
  if (model !== null && !isAlias(model) && !embeddingAliases.includes(model)) {
    throw invalidRequest(`Unknown model '${model}': expected one of ${[...ALIASES, ...embeddingAliases].join(', ')}.`, 'model');
  }
  const rows = await store.usage.rollup({ accountId: key.accountId, environment: key.environment, ...period, model });
  return c.json(usageReport({ account_id: key.accountId, environment: key.environment, model }, period, rows));
});
