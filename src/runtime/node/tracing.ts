/**
 * OpenTelemetry tracing for the Node runtime, on only when an OTLP endpoint is configured through the
 * standard variables (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, with
 * `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_SERVICE_NAME` ...; the exporter reads them itself). Spans go out in
 * batches over OTLP/HTTP; W3C trace context is read from clients and written to upstreams.
 */
import { context, propagation } from '@opentelemetry/api';
import type { Tracing } from '../../observability/telemetry.js';
import type { UpstreamHttp } from '../../providers/upstream-http.js';

export interface NodeTracing extends Tracing {
  /** Flushes the spans still batched, then stops exporting. */
  shutdown(): Promise<void>;
}

export function tracingConfigured(env: Readonly<Record<string, string | undefined>>): boolean {
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) && env.OTEL_SDK_DISABLED !== 'true';
}

/**
 * The OpenTelemetry SDK and its OTLP exporter are loaded here, when tracing is configured, and not before:
 * a gateway without an OTLP endpoint does not hold them in memory (docs/performance.md).
 */
export async function startTracing(options: { recordContent: boolean; serviceName?: string }): Promise<NodeTracing> {
  const { startTracingSdk } = await import('./tracing-sdk.js');
  return startTracingSdk(options);
}

/** A transport that sends the active span's `traceparent` to the upstream (tracing on only). */
export function propagatingHttp(inner: UpstreamHttp): UpstreamHttp {
  return (url, post) => {
    const headers: Record<string, string> = { ...post.headers };
    propagation.inject(context.active(), headers);
    return inner(url, { ...post, headers });
  };
}
