/**
 * The sandbox as an HTTP server speaking OpenAI's chat-completions protocol (Hono, Web standards), with
 * runtime-switchable fault injection. The Node entry point (src/runtime/node/sandbox-server.ts) serves it
 * and supplies the one thing Web standards cannot do: reset a TCP connection.
 *
 *   POST   /v1/chat/completions   streamed and not; fault per request in header `x-sandbox-fault` (JSON)
 *   GET    /v1/models
 *   GET|PUT|DELETE /_sandbox/faults   server-wide fault (JSON body: one fault or a list)
 *   GET|DELETE     /_sandbox/stats    request counter (DELETE resets it)
 */
import { Hono } from 'hono';
import { SSE_HEADERS } from '../../streaming/sse-encode.js';
import { parseFaults, planFaults, type SandboxFault, type SandboxPace } from './faults.js';
import { parseSandboxRequest, type SandboxRequest } from './http-request.js';
import { DEFAULT_PACE, TokenClock, untilAborted } from './pacing.js';
import { SandboxState } from './sandbox-state.js';
import { framesBody, sseFrames } from './sse-frames.js';
import { simulateCompletion } from './simulator.js';
import { errorBodyForStatus, invalidRequestBody, type OpenAIErrorBody } from './status-errors.js';
import { completionObject, malformedChunkText, newResponseMeta } from './wire-format.js';

export interface SandboxAppOptions {
  pace?: SandboxPace;
  state?: SandboxState;
  /** Listed by GET /v1/models; any model name is served regardless. */
  models?: readonly string[];
  /** Resets the client's connection; receives the runtime's bindings (Hono's `c.env`). */
  resetConnection?: (env: unknown) => void;
}

export interface SandboxApp {
  app: Hono<{ Bindings: object }>;
  state: SandboxState;
}

const DEFAULT_MODELS = ['sandbox-fast', 'sandbox-code', 'sandbox-smart'];

export function createSandboxApp(options: SandboxAppOptions = {}): SandboxApp {
  const state = options.state ?? new SandboxState();
  const pace = options.pace ?? DEFAULT_PACE;
  const models = options.models ?? DEFAULT_MODELS;
  const app = new Hono<{ Bindings: object }>();

  app.post('/v1/chat/completions', async (c) => {
    const header = c.req.header('x-sandbox-fault');
    const requestFaults = header === undefined ? null : parseFaultHeader(header);
    const faults = state.admit(Array.isArray(requestFaults) ? requestFaults : null);
    if (typeof requestFaults === 'string') return errorResponse(400, invalidRequestBody(requestFaults, null));

    let json: unknown;
    try {
      json = await c.req.json();
    } catch {
      return errorResponse(400, invalidRequestBody('The request body is not valid JSON.', null));
    }
    const parsed = parseSandboxRequest(json);
    if (!parsed.ok) return errorResponse(400, invalidRequestBody(parsed.message, parsed.param));

    const reset = options.resetConnection ? () => options.resetConnection?.(c.env) : null;
    return answer(parsed.request, faults, c.req.raw.signal, reset);
  });

  async function answer(
    request: SandboxRequest,
    faults: SandboxFault[],
    clientSignal: AbortSignal,
    reset: (() => void) | null,
  ): Promise<Response> {
    const plan = planFaults(faults, pace);
    const f = plan.failure;
    if (f?.type === 'status') {
      const headers: Record<string, string> = {};
      if (f.status === 429 || f.retryAfterSeconds !== undefined) headers['retry-after'] = String(f.retryAfterSeconds ?? 1);
      return errorResponse(f.status, errorBodyForStatus(f.status, f.message), headers);
    }
    const sim = simulateCompletion(request.input, request.model);
    const meta = newResponseMeta(request.model);
    const holdBeforeHeaders =
      (f?.type === 'stall_before_first_token' && (f.headers === false || !request.stream)) ||
      (f?.type === 'stall_after_tokens' && !request.stream);
    const resetBeforeHeaders = f?.type === 'reset' && (f.afterTokens === undefined || !request.stream);
    if (resetBeforeHeaders && !reset) return erroredBody();

    if (holdBeforeHeaders || resetBeforeHeaders) {
      state.begin();
      try {
        if (resetBeforeHeaders) reset?.();
        await untilAborted(clientSignal);
      } catch {
        // The client left (or the reset dropped it): nothing can be written any more.
      } finally {
        state.end();
      }
      return new Response(null, { status: 499 });
    }

    if (request.stream) {
      const cancelled = new AbortController();
      const signal = AbortSignal.any([clientSignal, cancelled.signal]);
      const frames = tracked(state, sseFrames({ sim, plan, meta, includeUsage: request.includeUsage, signal, reset }));
      return new Response(framesBody(frames, () => cancelled.abort()), { headers: SSE_HEADERS });
    }

    state.begin();
    try {
      await new TokenClock(plan.pace, clientSignal).beforeToken(Math.max(0, sim.tokenDeltas.length - 1));
    } catch {
      return new Response(null, { status: 499 });
    } finally {
      state.end();
    }
    const text = JSON.stringify(completionObject(sim, meta));
    const jsonHeaders = { 'content-type': 'application/json' };
    if (f?.type === 'cut_after_tokens') return new Response(text.slice(0, Math.floor(text.length / 2)), { headers: jsonHeaders });
    if (f?.type === 'malformed_chunk') return new Response(malformedChunkText(meta), { headers: jsonHeaders });
    return new Response(text, { headers: jsonHeaders });
  }

  app.get('/v1/models', (c) =>
    c.json({
      object: 'list',
      data: models.map((id) => ({ id, object: 'model', created: 1_700_000_000, owned_by: 'sandbox' })),
    }),
  );

  app.get('/_sandbox/faults', (c) => c.json({ faults: state.currentFaults() }));
  app.put('/_sandbox/faults', async (c) => {
    let json: unknown;
    try {
      json = await c.req.json();
    } catch {
      return errorResponse(400, invalidRequestBody('The fault body is not valid JSON.', null));
    }
    const parsed = json === null ? { ok: true as const, faults: [] } : parseFaults(json);
    if (!parsed.ok) return errorResponse(400, invalidRequestBody(parsed.message, null));
    state.setFaults(parsed.faults);
    return c.json({ faults: state.currentFaults() });
  });
  app.delete('/_sandbox/faults', (c) => {
    state.setFaults(null);
    return c.json({ faults: [] });
  });
  app.get('/_sandbox/stats', (c) => c.json(state.stats()));
  app.delete('/_sandbox/stats', (c) => {
    state.resetStats();
    return c.json(state.stats());
  });

  app.notFound((c) => errorResponse(404, invalidRequestBody(`Unknown sandbox route ${c.req.method} ${c.req.path}.`, null)));
  app.onError((err) => errorResponse(500, errorBodyForStatus(500, `Sandbox error: ${err.message}`)));

  return { app, state };
}

/** The fault list from the header, or a message saying why it is unusable. */
function parseFaultHeader(header: string): SandboxFault[] | string {
  let json: unknown;
  try {
    json = JSON.parse(header);
  } catch {
    return 'x-sandbox-fault is not valid JSON.';
  }
  const parsed = parseFaults(json);
  return parsed.ok ? parsed.faults : parsed.message;
}

function errorResponse(status: number, body: OpenAIErrorBody, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { ...headers, 'content-type': 'application/json' } });
}

/** Where no runtime hook can reset the connection, the closest Web-standard failure: a body that errors. */
function erroredBody(): Response {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.error(new Error('sandbox reset fault'));
    },
  });
  return new Response(body, { headers: { 'content-type': 'application/json' } });
}

/** Counts a stream as in flight from its first read until it ends, however it ends. */
async function* tracked(
  state: SandboxState,
  frames: AsyncGenerator<Uint8Array, void, undefined>,
): AsyncGenerator<Uint8Array, void, undefined> {
  state.begin();
  try {
    yield* frames;
  } finally {
    state.end();
  }
}
