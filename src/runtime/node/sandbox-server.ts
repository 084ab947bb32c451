/**
 * Serves the sandbox HTTP app on Node (used by `svc-gateway sandbox` and by tests that need a real upstream).
 * Node-only because of the `reset` fault: resetting a TCP connection needs the socket.
 */
import { IncomingMessage, Server } from 'node:http';
import { serve } from '@hono/node-server';
import type { SandboxFaultInput, SandboxPace } from '../../providers/sandbox/faults.js';
import { createSandboxApp } from '../../providers/sandbox/http-app.js';
import type { SandboxStats } from '../../providers/sandbox/sandbox-state.js';

export interface SandboxServerOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  host?: string;
  pace?: SandboxPace;
}

export interface SandboxServer {
  /** Base URL ending in `/v1`, ready for an OpenAI-compatible client. */
  url: string;
  port: number;
  setFault(fault: SandboxFaultInput | null): void;
  stats(): SandboxStats;
  close(): Promise<void>;
}

export async function startSandboxServer(options: SandboxServerOptions = {}): Promise<SandboxServer> {
  const host = options.host ?? '127.0.0.1';
  const { app, state } = createSandboxApp({ ...(options.pace ? { pace: options.pace } : {}), resetConnection });
  const server = serve({ fetch: app.fetch, port: options.port ?? 0, hostname: host });
  if (!(server instanceof Server)) throw new Error('sandbox server: expected an HTTP/1.1 server');
  await new Promise<void>((resolve, reject) => {
    if (server.listening) return resolve();
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('sandbox server: no TCP address');
  const port = address.port;
  const urlHost = host.includes(':') ? `[${host}]` : host;

  return {
    url: `http://${urlHost}:${port}/v1`,
    port,
    setFault: (fault) => state.setFaults(fault),
    stats: () => state.stats(),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        // Idle keep-alive sockets and stalled streams would otherwise hold close() open indefinitely.
        server.closeAllConnections();
      }),
  };
}

/** An RST rather than a FIN: the client sees ECONNRESET, as when an upstream's load balancer drops it. */
function resetConnection(env: unknown): void {
  const incoming = typeof env === 'object' && env !== null && 'incoming' in env ? env.incoming : null;
  if (!(incoming instanceof IncomingMessage)) return;
  const socket = incoming.socket;
  if (typeof socket.resetAndDestroy === 'function') socket.resetAndDestroy();
  else socket.destroy();
}
