/**
 * A write deadline for answers that are not streams. A client that reads nothing of an answer larger than
 * the kernel's buffers (a small receive window, a long-haul link) would hold its connection and the rest of
 * the answer in Node's memory forever: Node puts no bound on a response being written, and the server's
 * keep-alive timeout only starts once it is written. Past `ms` the connection is cut. Streams have a
 * deadline of their own (src/completions/streaming.ts), which measures the client's reading, not the
 * stream's length.
 */
import type { HttpBindings, serve } from '@hono/node-server';

/** What `serve` calls for each request (@hono/node-server does not export the type by name). */
export type FetchCallback = Parameters<typeof serve>[0]['fetch'];

export function withWriteDeadline(fetch: FetchCallback, ms: number): FetchCallback {
  return async (request, env) => {
    const response = await fetch(request, env);
    const outgoing = (env as Partial<HttpBindings> | undefined)?.outgoing;
    if (!(response instanceof Response) || outgoing === undefined) return response;
    if (response.headers.get('content-type')?.startsWith('text/event-stream') === true) return response;
    const timer = setTimeout(() => {
      if (!outgoing.writableFinished) outgoing.destroy(new Error(`the client read nothing of the answer for ${ms} ms`));
    }, ms);
    timer.unref();
    const clear = (): void => clearTimeout(timer);
    outgoing.once('finish', clear).once('close', clear);
    return response;
  };
}
