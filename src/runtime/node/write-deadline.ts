/**
 * A write deadline for answers that are not streams. A client that reads nothing of an answer larger than
 * the kernel's buffers (a small receive window, a long-haul link) would hold its connection and the rest of
 * the answer in Node's memory forever: Node puts no bound on a response being written, and the server's
 * keep-alive timeout only starts once it is written. The deadline is on the client's silence, not on the
 * answer's length: each time the socket's buffer drains (the client took bytes) it starts again, so a slow
 * reader of a large answer gets all of it, and one that took nothing for `ms` is cut. Streams have a
 * deadline of their own (src/completions/streaming.ts).
 */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { HttpBindings, serve } from '@hono/node-server';
import { deadlineIn } from '../../core/deadline-timers.js';

/** What `serve` calls for each request (@hono/node-server does not export the type by name). */
export type FetchCallback = Parameters<typeof serve>[0]['fetch'];

export function withWriteDeadline(fetch: FetchCallback, ms: number): FetchCallback {
  return async (request, env) => {
    const response = await fetch(request, env);
    const outgoing = (env as Partial<HttpBindings> | undefined)?.outgoing;
    if (!(response instanceof Response) || outgoing === undefined) return response;
    if (response.headers.get('content-type')?.startsWith('text/event-stream') === true) return response;
    guardAnswerWrite(outgoing, ms);
    return response;
  };
}

/** The deadline above on one answer being written (the Node entry's direct path calls it itself). */
export function guardAnswerWrite(outgoing: ServerResponse, ms: number): void {
  // Read at each check, not once: a pipelined response gets its socket only when its turn comes.
  const socket = (): Socket | null => outgoing.socket;
  // An answer is usually handed to the socket in one write, which drains only once all of it is sent: the
  // client's reading shows as the bytes the kernel took (written to the socket less what libuv still
  // queues) growing. A drain counts as progress too. The first window also sees the kernel's buffers fill,
  // so a client that reads nothing is cut between `ms` and twice that.
  let progressed = false;
  let taken = bytesTaken(socket());
  const onDrain = (): void => {
    progressed = true;
  };
  const check = (): void => {
    if (outgoing.writableFinished) return;
    const now = bytesTaken(socket());
    if (progressed || now > taken) {
      progressed = false;
      taken = now;
      timer = deadlineIn(ms, check, { keepAlive: false });
      return;
    }
    outgoing.destroy(new Error(`the client read nothing of the answer for ${ms} ms`));
  };
  let timer = deadlineIn(ms, check, { keepAlive: false });
  outgoing.on('drain', onDrain);
  const clear = (): void => {
    timer.cancel();
    outgoing.off('drain', onDrain);
  };
  outgoing.once('finish', clear).once('close', clear);
}

/** Bytes of this connection the kernel has taken: dispatched to the socket, less what libuv still queues. */
function bytesTaken(socket: Socket | null): number {
  if (socket === null) return 0;
  const handle: unknown = '_handle' in socket ? socket._handle : null;
  const queued = typeof handle === 'object' && handle !== null && 'writeQueueSize' in handle && typeof handle.writeQueueSize === 'number' ? handle.writeQueueSize : 0;
  return socket.bytesWritten - queued;
}
