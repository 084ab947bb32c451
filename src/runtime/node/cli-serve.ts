import { ConfigError } from '../../config/schema.js';
import type { Store } from '../../store/types.js';
import { CliError } from './cli-output.js';
import { loadConfig, providerSecrets } from './config-file.js';
import { logLevelOf, pinoLogger } from './pino-logger.js';
import { startTracing, tracingConfigured } from './tracing.js';
import { describeDatabase } from './open-store.js';
import { applyHeapGrowth } from './heap-growth.js';
import { startGateway } from './server.js';
import { startSandboxServer } from './sandbox-server.js';

const FIRST_START = `The database has no accounts yet. Create one and a key to call the gateway:
  npx svc-gateway accounts create --name "my team"                            (prints ACCOUNT_ID)
  npx svc-gateway credits grant --account ACCOUNT_ID --purchased 100000
  npx svc-gateway keys create --account ACCOUNT_ID                             (prints the key once)
then point any OpenAI client at this URL with that key.`;

function port(value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new CliError(`invalid port '${value}'`, 2);
  return n;
}

async function firstStartHint(store: Store): Promise<void> {
  if ((await store.keys.countAccounts()) === 0) process.stdout.write(FIRST_START + '\n');
}

export async function serveCommand(portFlag: string | undefined): Promise<void> {
  applyHeapGrowth(process.env.SVC_HEAP_GROWING_PERCENT);
  let logger;
  try {
    logger = pinoLogger({ level: logLevelOf(process.env.SVC_LOG_LEVEL) });
  } catch (e) {
    throw new CliError(e instanceof Error ? e.message : String(e), 2);
  }
  let config;
  try {
    config = loadConfig(process.env.SVC_CONFIG);
  } catch (e) {
    if (e instanceof ConfigError) throw new CliError(e.message);
    throw e;
  }
  const secrets = providerSecrets(config, process.env);
  const tracing = tracingConfigured(process.env) ? await startTracing({ recordContent: process.env.SVC_TRACE_CONTENT === 'true' }) : null;
  const gw = await startGateway({
    config,
    secrets,
    databaseUrl: process.env.SVC_DATABASE_URL,
    port: port(portFlag ?? process.env.PORT, 8080),
    host: process.env.HOST ?? '0.0.0.0',
    logger,
    adminToken: process.env.SVC_ADMIN_TOKEN || null,
    ...(process.env.SVC_ADMIN_PORT
      ? { adminListener: { host: process.env.SVC_ADMIN_HOST || '127.0.0.1', port: port(process.env.SVC_ADMIN_PORT, 0) } }
      : {}),
    ...(process.env.SVC_REDIS_URL ? { redisUrl: process.env.SVC_REDIS_URL } : {}),
    metricsToken: process.env.SVC_METRICS_TOKEN || null,
    tracing,
  }).catch(async (e: unknown) => {
    // The gateway closed what it opened; the exporter is ours to stop, or it would keep the process alive.
    await tracing?.shutdown().catch(() => undefined);
    throw e;
  });
  // Graceful: in-flight completions finish (up to server.shutdown_grace_ms) or end with an error event, and
  // every hold is settled before the store closes (docs/operations.md). A second signal exits at once.
  // Installed before the banner: a SIGTERM sent as soon as the gateway says it listens (an orchestrator's
  // probe, a test) would otherwise meet Node's default action and kill it without settling anything.
  const stop = (signal: NodeJS.Signals): void => {
    logger.info('shutting down', { signal });
    process.once(signal, () => process.exit(1));
    gw.shutdown().then(
      (unsettled) => process.exit(unsettled === 0 ? 0 : 1),
      (e: unknown) => {
        logger.error('shutdown failed', { error: String(e) });
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const db = describeDatabase(process.env.SVC_DATABASE_URL);
  process.stdout.write(
    `svc-gateway listening on http://localhost:${gw.port}/v1 (database: ${db.kind === 'sqlite' ? db.path : 'PostgreSQL'}; ` +
      `config: ${process.env.SVC_CONFIG ?? 'built-in sandbox catalog'})\n`,
  );
  if (gw.adminUrl) process.stdout.write(`operator API on ${gw.adminUrl} only\n`);
  await firstStartHint(gw.store);
}

export async function sandboxCommand(portFlag: string | undefined): Promise<void> {
  const server = await startSandboxServer({ port: port(portFlag, 8090), host: process.env.HOST ?? '127.0.0.1' });
  process.stdout.write(`sandbox provider listening on ${server.url}\n`);
  const stop = (): void => {
    server.close().then(() => process.exit(0), () => process.exit(1));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
