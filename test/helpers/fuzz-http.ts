/**
 * The HTTP side of the fuzz tests: one request with a hard deadline on the whole exchange (headers and body,
 * a stream included), so a hang fails the property instead of the test timeout; and the checks every answer
 * must pass (no 5xx, the OpenAI error envelope on every 4xx).
 */
import { Readable } from 'node:stream';
import { request } from 'undici';

export interface FuzzRequest {
  method: string;
  /** Path and query, already encoded as they go on the wire. */
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** Send the body with Transfer-Encoding: chunked, cut into pieces of this many bytes. */
  chunkBytes?: number;
}

export interface FuzzAnswer {
  status: number;
  contentType: string;
  text: string;
  ms: number;
}

// Far above any answer of the instant sandbox, even with the whole suite running in parallel.
export const REQUEST_DEADLINE_MS = 10_000;

async function* chunked(bytes: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

/** Sends the request and reads the whole answer, or throws `hang` past the deadline. */
export async function send(origin: string, req: FuzzRequest): Promise<FuzzAnswer> {
  const started = performance.now();
  const signal = AbortSignal.timeout(REQUEST_DEADLINE_MS);
  const bytes = req.body === undefined ? undefined : new TextEncoder().encode(req.body);
  try {
    const res = await request(`${origin}${req.path}`, {
      method: req.method as 'GET',
      headers: req.headers,
      body: bytes === undefined ? undefined : req.chunkBytes ? Readable.from(chunked(bytes, req.chunkBytes)) : bytes,
      signal,
    });
    const text = await res.body.text();
    const contentType = res.headers['content-type'];
    return { status: res.statusCode, contentType: typeof contentType === 'string' ? contentType : '', text, ms: performance.now() - started };
  } catch (e) {
    if (signal.aborted) throw new Error(`hang: no complete answer to ${req.method} ${req.path.slice(0, 120)} within ${REQUEST_DEADLINE_MS} ms`);
    throw e;
  }
}

const ERROR_TYPES = new Set([
  'invalid_request_error',
  'authentication_error',
  'permission_error',
  'not_found_error',
  'rate_limit_error',
  'insufficient_quota',
  'server_error',
]);

/**
 * The error table of docs/errors.md as `status type code` lines: every refusal a client can see is
 * documented there, so an answer outside it is an undocumented (or mistyped) error.
 */
export function documentedErrors(markdown: string): Set<string> {
  const out = new Set<string>();
  for (const line of markdown.split('\n')) {
    const m = /^\| (\d{3}) \| (\w+) \| ([^|]+) \|/.exec(line);
    if (!m) continue;
    for (const code of (m[3] as string).matchAll(/`([^`]+)`/g)) out.add(`${m[1]} ${m[2]} ${code[1]}`);
  }
  return out;
}

/**
 * Why the answer breaks the contract, or null: no 5xx, and every 4xx is exactly the OpenAI envelope with a
 * status, type and code that the error table documents together.
 */
export function contractBreach(a: FuzzAnswer, documented: ReadonlySet<string>): string | null {
  if (a.status >= 500) return `status ${a.status}: ${a.text.slice(0, 300)}`;
  if (a.status < 400) return null;
  if (!a.contentType.startsWith('application/json')) return `${a.status} with content-type '${a.contentType}'`;
  let body: unknown;
  try {
    body = JSON.parse(a.text);
  } catch {
    return `${a.status} with a body that is not JSON: ${a.text.slice(0, 200)}`;
  }
  const error = (body as { error?: unknown } | null)?.error as Record<string, unknown> | undefined;
  if (typeof body !== 'object' || body === null || Object.keys(body).join() !== 'error' || typeof error !== 'object' || error === null) {
    return `${a.status} without the error envelope: ${a.text.slice(0, 200)}`;
  }
  if (Object.keys(error).sort().join() !== 'code,message,param,type') return `${a.status} envelope with keys ${Object.keys(error).join()}`;
  if (typeof error.message !== 'string' || error.message === '') return `${a.status} envelope without a message`;
  if (typeof error.type !== 'string' || !ERROR_TYPES.has(error.type)) return `${a.status} envelope with type ${String(error.type)}`;
  if (error.param !== null && typeof error.param !== 'string') return `${a.status} envelope with param ${JSON.stringify(error.param)}`;
  if (error.code !== null && typeof error.code !== 'string') return `${a.status} envelope with code ${JSON.stringify(error.code)}`;
  if (!documented.has(`${a.status} ${error.type} ${String(error.code)}`)) {
    return `${a.status} ${error.type} ${String(error.code)} is not in docs/errors.md: ${error.message.slice(0, 200)}`;
  }
  return null;
}
