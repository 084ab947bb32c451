/**
 * The gateway on Deno, served by `Deno.serve` (src/runtime/web/long-lived-gateway.ts holds the rest).
 *
 *   deno run --sloppy-imports --node-modules-dir=manual --no-lock --allow-net --allow-env src/runtime/deno/server.ts
 *
 * `--sloppy-imports`: the sources import `./x.js` for `./x.ts` (NodeNext style). `--node-modules-dir=manual`:
 * npm packages (hono, postgres, zod, ...) come from the project's node_modules, as `npm ci` laid them.
 *
 * Environment: SVC_DATABASE_URL (PostgreSQL; required: the SQLite store is a Node addon), SVC_CONFIG (the
 * config's JSON text, as for the Worker; absent: the built-in sandbox catalog), SVC_ADMIN_TOKEN,
 * SVC_LOG_LEVEL (debug|info|warn|error|off), PORT (8080), HOST (0.0.0.0). Prints one line,
 * `svc-gateway listening on http://HOST:PORT/v1`, once it serves. SIGTERM and SIGINT drain as on Node.
 */
import { startLongLivedGateway } from '../web/long-lived-gateway.js';

/** The part of Deno's API this entry uses (the project type-checks with Node's types only). */
declare const Deno: {
  env: { toObject(): Record<string, string> };
  serve(
    options: { port: number; hostname: string; onListen?: (addr: { hostname: string; port: number }) => void },
    handler: (request: Request) => Response | Promise<Response>,
  ): { shutdown(): Promise<void> };
  addSignalListener(signal: 'SIGINT' | 'SIGTERM', handler: () => void): void;
  exit(code?: number): never;
};

const env = Deno.env.toObject();
const gateway = await startLongLivedGateway(env);
const server = Deno.serve(
  {
    port: Number(env.PORT ?? 8080),
    hostname: env.HOST ?? '0.0.0.0',
    onListen: ({ hostname, port }) => console.log(`svc-gateway listening on http://${hostname}:${port}/v1`),
  },
  gateway.fetch,
);

let stopping = false;
const stop = (): void => {
  if (stopping) Deno.exit(1);
  stopping = true;
  Promise.all([gateway.stop(), server.shutdown()])
    .then(([unsettled]) => Deno.exit(unsettled === 0 ? 0 : 1))
    .catch((e: unknown) => {
      gateway.logger.error('shutdown failed', { error: String(e) });
      Deno.exit(1);
    });
};
Deno.addSignalListener('SIGINT', stop);
Deno.addSignalListener('SIGTERM', stop);
