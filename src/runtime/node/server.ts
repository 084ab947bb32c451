/**
 * Starts the gateway on Node: opens the store (migrations applied), builds the routing table from the
 * configuration, serves the app and runs the hold reaper. Used by `svc-gateway serve` and by the tests,
 * which start it on an ephemeral port.
 */
import { serve } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createApp } from '../../core/app.js';
import { AlignedClock } from '../../core/aligned-clock.js';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import { requestTimeoutMs, type GatewayConfig } from '../../config/schema.js';
import { buildRoutingTable, type ProviderSecrets } from '../../providers/registry.js';
import { createNodeUpstreamClient } from './upstream-client.js';
import type { Store } from '../../store/types.js';
import { openStore } from './open-store.js';

/** Machine clocks drift by milliseconds per hour at most; once a minute keeps instances within a few ms. */
const CLOCK_ALIGN_INTERVAL_MS = 60_000;

export interface GatewayOptions {
  config: GatewayConfig;
  secrets: ProviderSecrets;
  /** SVC_DATABASE_URL; unset means the embedded SQLite file. */
  databaseUrl?: string;
  port: number;
  host?: string;
  clock?: Clock;
  logger: Logger;
  /** SVC_ADMIN_TOKEN; unset disables the admin API. */
  adminToken?: string | null;
}

export interface RunningGateway {
  /** Base URL of the OpenAI-compatible API, ending in /v1. */
  url: string;
  port: number;
  store: Store;
  close(): Promise<void>;
}

export async function startGateway(opts: GatewayOptions): Promise<RunningGateway> {
  // Unless a test injects its own, time is the database's: every instance then agrees on leases and expiry.
  const aligned = new AlignedClock();
  const clock = opts.clock ?? aligned;
  const store = await openStore(opts.databaseUrl, clock);
  const align = (): Promise<void> => aligned.align(() => store.serverTime());
  if (!opts.clock) await align();
  const { server: serverCfg } = opts.config;
  const upstream = createNodeUpstreamClient();
  const app = createApp({
    store,
    clock,
    routing: buildRoutingTable(opts.config, opts.secrets, upstream.fetch),
    logger: opts.logger,
    adminToken: opts.adminToken ?? null,
    limits: {
      maxBodyBytes: serverCfg.max_body_bytes,
      holdLeaseMs: serverCfg.hold_lease_ms,
      requestTimeoutMs: requestTimeoutMs(serverCfg),
      keepaliveMs: serverCfg.keepalive_ms,
    },
  });
  const host = opts.host ?? '127.0.0.1';
  const server = await new Promise<Server>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, port: opts.port, hostname: host }, () => resolve(s as Server)) as Server;
    s.once('error', reject);
  });
  const port = (server.address() as AddressInfo).port;

  // A hold whose gateway died mid-request is voided once its lease runs out, so its credits come back.
  const reaper = setInterval(() => {
    store.ledger.reapExpiredHolds(1000).then(
      (n) => n > 0 && opts.logger.info('voided expired holds', { count: n }),
      (e: unknown) => opts.logger.error('hold reaper failed', { error: String(e) }),
    );
  }, serverCfg.reaper_interval_ms);
  reaper.unref();
  const realign = setInterval(() => {
    align().catch((e: unknown) => opts.logger.warn('clock alignment failed', { error: String(e) }));
  }, CLOCK_ALIGN_INTERVAL_MS);
  realign.unref();

  let closed: Promise<void> | null = null;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}/v1`,
    port,
    store,
    close() {
      closed ??= (async () => {
        clearInterval(reaper);
        clearInterval(realign);
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        await upstream.close();
        await store.close();
      })();
      return closed;
    },
  };
}
