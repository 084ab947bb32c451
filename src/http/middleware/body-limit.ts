/**
 * 413 above the configured body size, decided from the headers whenever they say the size, so the body is
 * read once, by the handler. Hono's bodyLimit asks for `c.req.raw.body` first, which on @hono/node-server
 * turns the lightweight request into a full Web Request with a stream over the socket; the handler's
 * `text()` then reads through that stream instead of the server's direct buffer read (the profile of
 * bench/profile.mjs showed it among the top costs of a chat completion). A request with a Content-Length
 * cannot carry more than that: the HTTP parser stops the body there. Chunked bodies, whose size is known
 * only once read, still go through Hono's bodyLimit, which counts while reading.
 */
import type { MiddlewareHandler } from 'hono';
import { bodyLimit as honoBodyLimit } from 'hono/body-limit';
import type { AppEnv } from '../../core/deps.js';
import type { Context } from 'hono';

export function bodyLimit(maxSize: number, onError: (c: Context<AppEnv>) => Response): MiddlewareHandler<AppEnv> {
  const counting = honoBodyLimit({ maxSize, onError });
  return async (c, next) => {
    const length = c.req.header('content-length');
    if (c.req.header('transfer-encoding') !== undefined) return counting(c, next);
    // No Content-Length and no Transfer-Encoding: HTTP/1.1 says there is no body.
    if (length === undefined) return next();
    const size = Number(length);
    // The parser refuses malformed lengths; a non-number here is treated as too large rather than trusted.
    if (!Number.isSafeInteger(size) || size > maxSize) return onError(c);
    return next();
  };
}
