/** The OpenTelemetry SDK behind ./tracing.ts: a tracer provider exporting over OTLP/HTTP in batches. */
import { context, propagation, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { NodeTracing } from './tracing.js';

export function startTracingSdk(options: { recordContent: boolean; serviceName?: string }): NodeTracing {
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
