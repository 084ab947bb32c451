/**
 * A tiny real HTTP upstream for adapter tests: each scenario is a handler reached under its own base URL
 * (`/<scenario>/v1`), every request is recorded with a promise that settles when its connection closes.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';

export type Scenario = (req: IncomingMessage, res: ServerResponse, body: string) => void | Promise<void>;

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** Settles when the client's TCP connection closes. */
  connectionClosed: Promise<void>;
}

export interface FixtureServer {
  baseUrl(scenario: string): string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export async function startFixtureServer(scenarios: Record<string, Scenario>): Promise<FixtureServer> {
  const requests: RecordedRequest[] = [];
  // One close listener per socket, not per request: keep-alive sockets carry many requests.
  const socketClosed = new WeakMap<object, Promise<void>>();
  const closedOf = (req: IncomingMessage): Promise<void> => {
    let p = socketClosed.get(req.socket);
    if (p === undefined) {
      p = req.socket.destroyed ? Promise.resolve() : new Promise<void>((resolve) => req.socket.once('close', () => resolve()));
      socketClosed.set(req.socket, p);
    }
    return p;
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const connectionClosed = closedOf(req);
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, connectionClosed });
      const name = (req.url ?? '').split('/')[1] ?? '';
      const scenario = scenarios[name];
      if (!scenario) {
        res.writeHead(404).end();
        return;
      }
      req.socket.setNoDelay(true);
      void Promise.resolve(scenario(req, res, body)).catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: (scenario) => `http://127.0.0.1:${port}/${scenario}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

const PIECE_SIZES = [1, 7, 3, 13, 64, 2, 29, 5, 101, 11];

/** Writes in odd-sized pieces with an event-loop turn between them, so the client reads split frames. */
export async function writeInPieces(res: ServerResponse, data: string | Uint8Array, limit = Infinity): Promise<void> {
  const bytes = typeof data === 'string' ? new TextEncoder().encode(data) : data;
  let offset = 0;
  for (let i = 0; offset < Math.min(bytes.length, limit) && !res.destroyed; i++) {
    const size = PIECE_SIZES[i % PIECE_SIZES.length] ?? 1;
    const end = Math.min(offset + size, bytes.length, limit);
    res.write(bytes.subarray(offset, end));
    offset = end;
    await new Promise((r) => setImmediate(r));
  }
}

export function sseHead(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
}

/** A file of test/fixtures/<provider>/ (OpenAI's by default). */
export function fixture(name: string, provider = 'openai'): string {
  return readFileSync(new URL(`../../fixtures/${provider}/${name}`, import.meta.url), 'utf8');
}

/**
 * A port nothing listens on: connecting to it is refused. It is taken below the kernel's ephemeral range,
 * because a port from that range (what `listen(0)` hands out) can later be bound by another test file's
 * server, or be the local port of the very connection that dials it (TCP self-connect on loopback); either
 * turned "refused" into an answer, rarely, in CI.
 */
export async function closedPort(): Promise<number> {
  let ephemeralLow = 32768;
  try {
    ephemeralLow = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || ephemeralLow;
  } catch {
    // Not Linux: keep the usual lower bound.
  }
  const low = 10000;
  const high = Math.max(low + 1000, ephemeralLow - 1);
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low));
    const server = createNetServer();
    const free = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (!free) continue;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return port;
  }
  throw new Error('no free port below the ephemeral range');
}

export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms)),
  ]);
}
