/**
 * The observability seam of the core: what the gateway reports as it works, with a no-op default. The Node
 * runtime implements it with prom-client (src/runtime/node/metrics.ts) and an OpenTelemetry SDK
 * (src/runtime/node/tracing.ts); a runtime without them (Workers) keeps the no-op. Runtime-agnostic: no
 * `node:` imports here, only @opentelemetry/api types (no-op without an SDK).
 *
 * Labels are bounded by the configuration (door, alias, provider, model, outcome): never a key, an account
 * or a request id.
 */
import type { TextMapPropagator, Tracer } from '@opentelemetry/api';

/** Tracing is on only when an exporter is configured: without it the core starts no span at all. */
export interface Tracing {
  tracer: Tracer;
  /** W3C trace context: `traceparent` read from clients and written to upstreams. */
  propagator: TextMapPropagator;
  /** Prompt and completion text in spans (`gen_ai.input.messages`, `gen_ai.output.messages`): off unless the operator opts in. */
  recordContent: boolean;
}

/** One request, as the metrics see it when it ended (for a stream: when the stream ended). */
export interface RequestMetrics {
  door: string;
  /** The alias asked for; '' when the request named none (not a completion). */
  alias: string;
  provider: string;
  model: string;
  status: number;
  /** The whole request, and the part of it spent waiting on upstreams. */
  seconds: number;
  upstreamSeconds: number;
}

/** What a completion's ending charged, and where: shared by the metrics and the access line. */
export interface ChargedCompletion {
  alias: string;
  provider: string;
  model: string;
  promptTokens: number;
  completionTokens: number;
  credits: number;
}

export interface SettlementMetrics extends ChargedCompletion {
  /** The hold was voided (nothing charged) rather than settled. */
  voided: boolean;
  /** Credits the upstream's usage would have cost beyond the hold; 0 when the hold covered it. */
  shortfallCredits: number;
  /** Attempts after the first (a failover each), and those of them that continued a partial answer. */
  failovers: number;
  continuations: number;
}

export interface Telemetry {
  readonly tracing: Tracing | null;
  requestEnded(r: RequestMetrics): void;
  /** One upstream attempt ended: its outcome (`ok`, `timeout`, `http_503`, ...) and how long it ran. */
  attemptEnded(provider: string, model: string, outcome: string, seconds: number): void;
  /** Time from the request's arrival to the first token of the answer. */
  firstToken(alias: string, seconds: number): void;
  holdEnded(s: SettlementMetrics): void;
  /** A hold the ledger refused (`insufficient_credits`, `daily_credit_limit_exceeded`, `revoked_api_key`, ...). */
  holdRefused(reason: string): void;
  /** Pending holds the reaper voided because their lease ran out. */
  holdsReaped(count: number): void;
  /** A settle or void that did not land in line (the ledger was away): retried in the background. */
  settleDeferred(): void;
  /** A request refused by a rate limit (429). */
  rateLimited(door: string): void;
  /** A rate-limit decision made without Redis: by this instance's windows (`open`) or refused (`closed`). */
  rateLimiterFallback(policy: 'open' | 'closed'): void;
  streamOpened(): void;
  streamClosed(): void;
}

export const noTelemetry: Telemetry = {
  tracing: null,
  requestEnded() {},
  attemptEnded() {},
  firstToken() {},
  holdEnded() {},
  holdRefused() {},
  holdsReaped() {},
  settleDeferred() {},
  rateLimited() {},
  rateLimiterFallback() {},
  streamOpened() {},
  streamClosed() {},
};

/** The metrics in the Prometheus text format, for GET /metrics. */
export interface MetricsExposition {
  contentType: string;
  render(): Promise<string>;
}

/** What /readyz answers: ready when every check passed. */
export interface Readiness {
  ready: boolean;
  checks: Record<string, 'ok' | 'failed' | 'draining'>;
}
