/**
 * The app's limits from a validated configuration: the one place that maps `server.*` and `limits.*` to
 * what the request path reads, for every runtime (Node server, Workers).
 */
import { DEFAULT_LEDGER_RETRY_DELAYS_MS } from '../billing/meter.js';
import { requestTimeoutMs, type GatewayConfig } from '../config/schema.js';
import type { AppDeps } from './deps.js';

export function limitsFromConfig(config: GatewayConfig): AppDeps['limits'] {
  const server = config.server;
  return {
    maxBodyBytes: server.max_body_bytes,
    holdLeaseMs: server.hold_lease_ms,
    requestTimeoutMs: requestTimeoutMs(server),
    keepaliveMs: server.keepalive_ms,
    writeTimeoutMs: server.write_timeout_ms,
    ledgerRetryDelaysMs: DEFAULT_LEDGER_RETRY_DELAYS_MS,
    mediaUrlMaxTokens: config.limits.media_url_max_tokens ?? null,
    maxApiKeysPerAccount: config.limits.max_api_keys_per_account,
    adminFailureDelayMs: server.admin_failure_delay_ms,
    strictParams: server.strict_params,
    corsOrigins: server.cors_origins,
    relayReasoning: server.relay_reasoning,
    responsesRetentionMs: server.responses_retention_days * 86_400_000,
  };
}
