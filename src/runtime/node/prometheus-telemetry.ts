/**
 * The Node runtime's Telemetry: Prometheus metrics with prom-client, served at GET /metrics. Every label
 * value comes from a bounded set (doors, configured aliases, providers and models, HTTP statuses, attempt
 * outcomes, refusal codes): never a key, an account or a request id. Node's own metrics (event-loop lag,
 * heap, GC) come from prom-client's default collectors.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { MetricsExposition, RequestMetrics, SettlementMetrics, Telemetry, Tracing } from '../../observability/telemetry.js';
import type { TargetHealth } from '../../routing/health.js';

/** Seconds: from a cached answer (a few ms) to a long reasoning answer (minutes). */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
/** The gateway's own share of a request: sub-millisecond to tens of ms. */
const OVERHEAD_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];

const BREAKER_STATE = { closed: 0, half_open: 1, open: 2 } as const;

export interface PrometheusTelemetry extends Telemetry {
  readonly exposition: MetricsExposition;
  /** A ledger call's duration, and whether it failed (`operation`: reserve, settle, void, renew, ...). */
  ledgerCall(operation: string, seconds: number, failed: boolean): void;
}

export function prometheusTelemetry(options: { health: () => ReadonlyMap<string, TargetHealth>; tracing: Tracing | null }): PrometheusTelemetry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });

  const requests = new Counter({
    name: 'svc_requests_total',
    help: 'Requests by door, alias, routed provider and model, and HTTP status.',
    labelNames: ['door', 'alias', 'provider', 'model', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'svc_request_duration_seconds',
    help: 'Whole request time (for a stream: until it ended), by door and alias.',
    labelNames: ['door', 'alias'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const overhead = new Histogram({
    name: 'svc_gateway_overhead_seconds',
    help: 'Request time not spent waiting on upstreams, by door.',
    labelNames: ['door'] as const,
    buckets: OVERHEAD_BUCKETS,
    registers: [registry],
  });
  const attempts = new Counter({
    name: 'svc_upstream_attempts_total',
    help: 'Upstream attempts by provider, model and outcome (ok, timeout, connect, http_503, ...).',
    labelNames: ['provider', 'model', 'outcome'] as const,
    registers: [registry],
  });
  const attemptDuration = new Histogram({
    name: 'svc_upstream_attempt_duration_seconds',
    help: 'Upstream attempt time, from the call to its last event, by provider and model.',
    labelNames: ['provider', 'model'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const firstToken = new Histogram({
    name: 'svc_time_to_first_token_seconds',
    help: 'From the request to the first token of the answer, by alias.',
    labelNames: ['alias'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const tokens = new Counter({
    name: 'svc_tokens_total',
    help: 'Tokens charged, by alias, routed provider and model, and direction (input, output).',
    labelNames: ['alias', 'provider', 'model', 'direction'] as const,
    registers: [registry],
  });
  const credits = new Counter({
    name: 'svc_credits_charged_total',
    help: 'Credits charged, by alias and routed provider and model.',
    labelNames: ['alias', 'provider', 'model'] as const,
    registers: [registry],
  });
  const holds = new Counter({
    name: 'svc_holds_total',
    help: 'Credit holds by how they ended: settled, voided, reaped (lease ran out), refused (by reason).',
    labelNames: ['outcome', 'reason'] as const,
    registers: [registry],
  });
  const deferred = new Counter({
    name: 'svc_settlements_deferred_total',
    help: 'Hold endings that did not land in line (the ledger was away) and were retried in the background.',
    registers: [registry],
  });
  const shortfalls = new Counter({
    name: 'svc_shortfalls_total',
    help: 'Completions whose upstream usage cost more than their hold (the excess is not charged).',
    labelNames: ['alias', 'provider', 'model'] as const,
    registers: [registry],
  });
  const shortfallCredits = new Counter({
    name: 'svc_shortfall_credits_total',
    help: 'Credits the upstream usage would have cost beyond the holds.',
    labelNames: ['alias', 'provider', 'model'] as const,
    registers: [registry],
  });
  const failovers = new Counter({
    name: 'svc_failovers_total',
    help: 'Attempts after the first of a completion, by alias; kind: retry (nothing delivered yet) or continuation (mid-stream).',
    labelNames: ['alias', 'kind'] as const,
    registers: [registry],
  });
  const rateLimited = new Counter({
    name: 'svc_rate_limited_total',
    help: 'Requests refused by a rate limit (429), by door.',
    labelNames: ['door'] as const,
    registers: [registry],
  });
  const limiterFallbacks = new Counter({
    name: 'svc_rate_limiter_fallbacks_total',
    help: 'Rate-limit decisions Redis did not answer: decided by this instance alone (open) or refused with 503 (closed).',
    labelNames: ['policy'] as const,
    registers: [registry],
  });
  const openStreams = new Gauge({ name: 'svc_open_streams', help: 'Streams being relayed now.', registers: [registry] });
  const ledgerDuration = new Histogram({
    name: 'svc_ledger_operation_duration_seconds',
    help: 'Ledger store calls by operation.',
    labelNames: ['operation'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const ledgerErrors = new Counter({
    name: 'svc_ledger_errors_total',
    help: 'Ledger store calls that failed, by operation.',
    labelNames: ['operation'] as const,
    registers: [registry],
  });
  new Gauge({
    name: 'svc_circuit_breaker_state',
    help: 'Circuit breaker per upstream model: 0 closed, 1 half open, 2 open.',
    labelNames: ['provider', 'model'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [id, h] of options.health()) {
        const slash = id.indexOf('/');
        this.set({ provider: id.slice(0, slash), model: id.slice(slash + 1) }, BREAKER_STATE[h.snapshot().state]);
      }
    },
  });

  return {
    tracing: options.tracing,
    exposition: { contentType: registry.contentType, render: () => registry.metrics() },
    requestEnded(r: RequestMetrics) {
      requests.inc({ door: r.door, alias: r.alias, provider: r.provider, model: r.model, status: String(r.status) });
      duration.observe({ door: r.door, alias: r.alias }, r.seconds);
      overhead.observe({ door: r.door }, Math.max(0, r.seconds - r.upstreamSeconds));
    },
    attemptEnded(provider, model, outcome, seconds) {
      attempts.inc({ provider, model, outcome });
      attemptDuration.observe({ provider, model }, seconds);
    },
    firstToken(alias, seconds) {
      firstToken.observe({ alias }, seconds);
    },
    holdEnded(s: SettlementMetrics) {
      const by = { alias: s.alias, provider: s.provider, model: s.model };
      holds.inc({ outcome: s.voided ? 'voided' : 'settled', reason: '' });
      if (!s.voided) {
        tokens.inc({ ...by, direction: 'input' }, s.promptTokens);
        tokens.inc({ ...by, direction: 'output' }, s.completionTokens);
        credits.inc(by, s.credits);
      }
      if (s.shortfallCredits > 0) {
        shortfalls.inc(by);
        shortfallCredits.inc(by, s.shortfallCredits);
      }
      if (s.failovers - s.continuations > 0) failovers.inc({ alias: s.alias, kind: 'retry' }, s.failovers - s.continuations);
      if (s.continuations > 0) failovers.inc({ alias: s.alias, kind: 'continuation' }, s.continuations);
    },
    holdRefused(reason) {
      holds.inc({ outcome: 'refused', reason });
    },
    holdsReaped(count) {
      holds.inc({ outcome: 'reaped', reason: '' }, count);
    },
    settleDeferred() {
      deferred.inc();
    },
    rateLimited(door) {
      rateLimited.inc({ door });
    },
    rateLimiterFallback(policy) {
      limiterFallbacks.inc({ policy });
    },
    streamOpened() {
      openStreams.inc();
    },
    streamClosed() {
      openStreams.dec();
    },
    ledgerCall(operation, seconds, failed) {
      ledgerDuration.observe({ operation }, seconds);
      if (failed) ledgerErrors.inc({ operation });
    },
  };
}
