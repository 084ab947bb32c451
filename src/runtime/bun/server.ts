/**
 * The gateway on Bun, served by `Bun.serve` (src/runtime/web/long-lived-gateway.ts holds the rest).
 *
 *   bun run src/runtime/bun/server.ts
 *
 * Bun runs the TypeScript sources as they are (it maps `./x.js` imports to `./x.ts`), and npm packages from
 * the project's node_modules.
 *
 * Environment: SVC_DATABASE_URL (PostgreSQL; required here), SVC_CONFIG (the config's JSON text, as for the
 * Worker; absent: the built-in sandbox catalog), SVC_ADMIN_TOKEN, SVC_LOG_LEVEL (debug|info|warn|error|off),
 * PORT (8080), HOST (0.0.0.0). Prints one line, `svc-gateway listening on http://HOST:PORT/v1`, once it
 * serves. SIGTERM and SIGINT drain as on Node (Bun delivers signals through Node's `process`).
 */
import { startLongLivedGateway } from '../web/long-lived-gateway.js';

/** The part of Bun's API this entry uses (the project type-checks with Node's types only). */
declare const Bun: {
  env: Record<string, string | undefined>;
  serve(options: {
    port: number;
    hostname: string;
    idleTimeout?: number;
    fetch: (request: Request) => Response | Promise<Response>;
  }): { hostname: string; port: number; stop(closeActive?: boolean): Promise<void> };
};

const env = Bun.env;
const gateway = await startLongLivedGateway(env);
const server = Bun.serve({
  port: Number(env.PORT ?? 8080),
  hostname: env.HOST ?? '0.0.0.0',
  // Seconds a connection may stay silent, Bun's longest (255): its default (10) would cut a whole answer
  // whose upstream thinks longer (a stream's keepalive comes every server.keepalive_ms, 10 s), and 0 would
  // let an idle or non-reading client hold its connection forever.
  idleTimeout: 255,
  fetch: gateway.fetch,
});
console.log(`svc-gateway listening on http://${server.hostname}:${server.port}/v1`);

let stopping = false;
const stop = (): void => {
  if (stopping) process.exit(1);
  stopping = true;
  Promise.all([gateway.stop(), server.stop()])
    .then(([unsettled]) => process.exit(unsettled === 0 ? 0 : 1))
    .catch((e: unknown) => {
      gateway.logger.error('shutdown failed', { error: String(e) });
      process.exit(1);
    });
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
