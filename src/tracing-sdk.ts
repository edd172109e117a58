/**
 * The OpenTelemetry SDK of a process that traces (loaded by tracing.ts only then): spans batched to the OTLP/HTTP
 * exporter (which reads `OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_HEADERS`… itself), W3C trace context, the
 * context kept across awaits (AsyncLocalStorage), undici's instrumentation (a client span per API request), and
 * bullmq-otel for the queues.
 */
import { context, propagation, SpanStatusCode, trace, type Attributes } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { BullMQOtel } from 'bullmq-otel';
import type { Telemetry } from 'bullmq';

/** A span's attributes (undefined ones are left out). */
export type SpanAttributes = Record<string, string | number | boolean | undefined>;

/** The running SDK, as the rest of the code sees it (through tracing.ts). */
export interface ActiveTracing {
  span<T>(name: string, attributes: SpanAttributes, fn: () => Promise<T>): Promise<T>;
  /** bullmq-otel's telemetry: BullMQ spans, and the trace context carried in each job to its worker. */
  telemetry: Telemetry;
  shutdown(): Promise<void>;
}

export function startTracingSdk(env: Record<string, string | undefined>): ActiveTracing {
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME?.trim() || 'product-sync' }),
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter() })],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  // Enabled by its constructor, on the global provider set just above.
  const undici = new UndiciInstrumentation();
  const tracer = provider.getTracer('product-sync');
  return {
    span: (name, attributes, fn) =>
      tracer.startActiveSpan(name, { attributes: defined(attributes) }, async (span) => {
        try {
          return await fn();
        } catch (err) {
          span.recordException(err as Error);
          span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.message });
          throw err;
        } finally {
          span.end();
        }
      }),
    telemetry: new BullMQOtel({ tracerName: 'product-sync' }),
    async shutdown() {
      undici.disable();
      await provider.shutdown();
    },
  };
}

function defined(a: SpanAttributes): Attributes {
  return Object.fromEntries(Object.entries(a).filter(([, v]) => v !== undefined)) as Attributes;
}
