import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../../core/deps.js';
import { newId } from '../../core/ids.js';

/** Every answer carries `x-request-id`; a client-sent id is kept if it is short and printable, for tracing. */
export const requestId: MiddlewareHandler<AppEnv> = async (c, next) => {
  const sent = c.req.header('x-request-id');
  const id = sent && /^[\w.:-]{1,128}$/.test(sent) ? sent : newId('req_');
  c.set('requestId', id);
  c.header('x-request-id', id);
  await next();
};
