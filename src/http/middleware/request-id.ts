import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../../core/deps.js';
import { newId } from '../../core/ids.js';

/** Every answer carries `x-request-id`; a client-sent id is kept if it is short and printable, for tracing. */
export const requestId: MiddlewareHandler<AppEnv> = async (c, next) => {
  const id = requestIdOf(c.req.header('x-request-id'));
  c.set('requestId', id);
  c.header('x-request-id', id);
  await next();
};

/** The id a request goes by: the one its client sent, when short and printable, else a new one. */
export function requestIdOf(sent: string | undefined): string {
  return sent && /^[\w.:-]{1,128}$/.test(sent) ? sent : newId('req_');
}
