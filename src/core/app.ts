/**
 * createApp(deps): the Hono application, wiring only. Runtime-agnostic: the Node entry point (and later
 * an edge entry) builds the deps and serves `app.fetch`.
 */
import { Hono } from 'hono';
import { publicCors } from '../http/middleware/cors.js';
import { GatewayError } from '../openai/errors.js';
import { adminAccountRoutes } from '../http/admin/accounts.js';
import { adminHealthRoutes } from '../http/admin/health.js';
import { apiKeysRoutes } from '../http/api-keys.js';
import { chatCompletionsRoutes } from '../http/chat-completions.js';
import { completionsRoutes } from '../http/completions.js';
import { messagesRoutes } from '../http/messages.js';
import { responsesRoutes } from '../http/responses.js';
import { embeddingsRoutes } from '../http/embeddings.js';
import { creditsRoutes } from '../http/credits.js';
import { adminAuth } from '../http/middleware/admin-auth.js';
import { auth } from '../http/middleware/auth.js';
import { bodyLimit } from '../http/middleware/body-limit.js';
import { errorResponse, onError, onNotFound } from '../http/middleware/errors.js';
import { inSpan, observe } from '../http/middleware/observe.js';
import { metricsRoutes, readinessRoutes } from '../http/probes.js';
import { requestId } from '../http/middleware/request-id.js';
import { modelsRoutes } from '../http/models.js';
import { usageRoutes } from '../http/usage.js';
import type { AppDeps, AppEnv } from './deps.js';

/**
 * Which doors an app serves: `all` (the default, one listener), or, when the operator API has a listener of
 * its own (SVC_ADMIN_PORT), `public` (everything but /admin/v1 and /metrics) and `admin` (only /admin/v1, /metrics
 * and the probes).
 */
export type Doors = 'all' | 'public' | 'admin';

export function createApp(deps: AppDeps, doors: Doors = 'all'): Hono<AppEnv> {
  // strict: false: `/v1/chat/completions/` is `/v1/chat/completions`, as clients that join URLs carelessly expect.
  const app = new Hono<AppEnv>({ strict: false });
  app.onError(onError);
  app.notFound(onNotFound);
  app.use('*', async (c, next) => {
    c.set('deps', deps);
    await next();
  });
  app.use('*', requestId);
  app.use('*', observe);
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.route('/', readinessRoutes);
  if (doors !== 'public') app.route('/', metricsRoutes);
  const limit = bodyLimit(deps.limits.maxBodyBytes, (c) =>
    errorResponse(
      c,
      new GatewayError(413, 'invalid_request_error', 'request_too_large', `The request body exceeds ${deps.limits.maxBodyBytes} bytes.`),
    ),
  );
  // Authentication first: an anonymous client gets its 401 before a byte of its body is read.
  if (doors !== 'admin') {
    // Before authentication: a browser's preflight carries no key. Headers of every answer, errors included.
    const cors = publicCors(deps.limits.corsOrigins ?? ['*']);
    if (cors !== null) app.use('/v1/*', cors);
    app.use('/v1/*', inSpan('svc.authenticate', auth));
    app.use('/v1/*', limit);
    app.route('/v1/models', modelsRoutes);
    app.route('/v1/chat/completions', chatCompletionsRoutes);
    app.route('/v1/completions', completionsRoutes);
    app.route('/v1/messages', messagesRoutes);
    app.route('/v1/responses', responsesRoutes);
    app.route('/v1/embeddings', embeddingsRoutes);
    app.route('/v1/credits', creditsRoutes);
    app.route('/v1/usage', usageRoutes);
    app.route('/v1/api-keys', apiKeysRoutes);
  }
  if (doors !== 'public') {
    app.use('/admin/v1/*', adminAuth);
    app.use('/admin/v1/*', limit);
    app.route('/admin/v1', adminAccountRoutes);
    app.route('/admin/v1', adminHealthRoutes);
  }
  return app;
}
