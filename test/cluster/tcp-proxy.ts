/**
 * A TCP proxy in front of PostgreSQL that can play a database restart: every open connection is cut and
 * new ones are refused until `up()`. Seen from the gateways this is what a restart looks like, without
 * stopping the machine's shared server under the other test files running at the same time.
 *
 * It can also lose one reply: `loseReplyTo(text)` lets the next client message containing `text` reach the
 * server, then cuts the client's side at once and the server's a moment later, so the statement runs and
 * commits while its answer goes nowhere (a connection reset before ReadyForQuery).
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  /** Cuts every connection and refuses new ones. */
  down(): void;
  up(): void;
  /** Loses the reply to the next message containing `text`; resolves once it did. */
  loseReplyTo(text: string): Promise<void>;
  close(): Promise<void>;
}

/** How long the server side stays open after the client's was cut: time to run and commit the statement. */
const SERVER_GRACE_MS = 500;

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let accepting = true;
  let armed: { text: Buffer; fired: () => void } | null = null;
  const server: Server = createServer((client) => {
    if (!accepting) {
      client.destroy();
      return;
    }
    const upstream = connect(targetPort, targetHost);
    sockets.add(client).add(upstream);
    let losing = false;
    const drop = (): void => {
      if (losing) return;
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.on('data', (bytes: Buffer) => {
      upstream.write(bytes);
      if (armed === null || !bytes.includes(armed.text)) return;
      const { fired } = armed;
      armed = null;
      losing = true;
      upstream.unpipe(client);
      client.destroy();
      sockets.delete(client);
      setTimeout(() => {
        upstream.destroy();
        sockets.delete(upstream);
        fired();
      }, SERVER_GRACE_MS);
    });
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('proxy has no port');
  return {
    port: address.port,
    down() {
      accepting = false;
      for (const s of sockets) s.destroy();
      sockets.clear();
    },
    up() {
      accepting = true;
    },
    loseReplyTo(text) {
      return new Promise((resolve) => {
        armed = { text: Buffer.from(text), fired: resolve };
      });
    },
    close() {
      accepting = false;
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
