/**
 * A completion door's exchange (./door-exchange.ts) on Hono's Context: how every runtime serves the doors,
 * and how the Node entry serves what its direct path leaves to the app (src/runtime/node/direct-doors.ts).
 */
import type { Context } from 'hono';
import type { AppEnv } from '../core/deps.js';
import type { DoorAnswer, DoorRequest } from './door-exchange.js';

export function doorRequestOf(c: Context<AppEnv>): DoorRequest {
  const outgoing = c.env?.outgoing;
  return {
    deps: c.get('deps'),
    key: c.get('key'),
    requestId: c.get('requestId'),
    observation: c.get('observation'),
    header: (name) => c.req.header(name),
    text: () => c.req.text(),
    // A getter: on @hono/node-server the signal is made when first asked for, and a refused request never asks.
    get clientSignal() {
      return c.req.raw.signal;
    },
    abandonConnection: outgoing ? (error) => outgoing.destroy(error) : undefined,
  };
}

export function responseOf(c: Context<AppEnv>, answer: DoorAnswer): Response {
  // A body through `c.body`: @hono/node-server writes such a response without a stream.
  if (answer.kind === 'body') return c.body(answer.body, answer.status as 200, answer.headers);
  return new Response(new ReadableStream<Uint8Array>(answer.stream), { headers: answer.headers });
}
