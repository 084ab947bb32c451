/**
 * OpenTelemetry tracing for the Node runtime, on only when an OTLP endpoint is configured through the
 * standard variables (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, with
 * `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_SERVICE_NAME` ...; the exporter reads them itself). Spans go out in
 * batches over OTLP/HTTP; W3C trace context is read from clients and written to upstreams.
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { Tracing } from '../../observability/telemetry.js';
import type { UpstreamHttp } from '../../providers/upstream-http.js';

export interface NodeTracing extends Tracing {
  /** Flushes the spans still batched, then stops exporting. */
  shutdown(): Promise<void>;
}

export function tracingConfigured(env: Readonly<Record<string, string | undefined>>): boolean {
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) && env.OTEL_SDK_DISABLED !== 'true';
}

export function startTracing(options: { recordContent: boolean; serviceName?: string }): NodeTracing {
  const propagator = new W3CTraceContextPropagator();
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: options.serviceName ?? process.env.OTEL_SERVICE_NAME ?? 'svc-gateway' }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  // The async-hooks context manager, so the active span follows a request across awaits (upstream calls
  // read it to send `traceparent`).
  provider.register({ propagator });
  return {
    tracer: provider.getTracer('svc-gateway'),
    propagator,
    recordContent: options.recordContent,
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}

/** A transport that sends the active span's `traceparent` to the upstream (tracing on only). */
export function propagatingHttp(inner: UpstreamHttp): UpstreamHttp {
  return (url, post) => {
    const headers: Record<string, string> = { ...post.headers };
    propagation.inject(context.active(), headers);
    return inner(url, { ...post, headers });
  };
}
