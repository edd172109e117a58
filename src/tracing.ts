/**
 * OpenTelemetry traces (docs/operations.md "Traces"), only when `OTEL_EXPORTER_OTLP_ENDPOINT` (or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set: then the SDK (tracing-sdk.ts) is loaded when the process starts and
 * exports spans over OTLP/HTTP. Unset, nothing of it is loaded, {@link traced} only calls its function, and the queues
 * get no telemetry: a run pays nothing.
 */
import type { Telemetry } from 'bullmq';
import type { ActiveTracing, SpanAttributes } from './tracing-sdk.ts';

export type { SpanAttributes } from './tracing-sdk.ts';

let active: ActiveTracing | null = null;

/** Runs `fn` in a span named `name` (a child of the current one) when tracing is on; else just runs it. */
export function traced<T>(name: string, attributes: SpanAttributes, fn: () => Promise<T>): Promise<T> {
  return active ? active.span(name, attributes, fn) : fn();
}

/** The `telemetry` option of a BullMQ Queue or Worker: bullmq-otel's when tracing is on, else nothing. */
export function queueTelemetry(): { telemetry?: Telemetry } {
  return active ? { telemetry: active.telemetry } : {};
}

/** True when `env` asks for traces. */
export function tracingWanted(env: Record<string, string | undefined>): boolean {
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

/** Starts the SDK when `env` asks for traces (once per process). */
export async function startTracing(env: Record<string, string | undefined> = process.env): Promise<void> {
  if (active || !tracingWanted(env)) return;
  const { startTracingSdk } = await import('./tracing-sdk.ts');
  active = startTracingSdk(env);
}

/** Flushes the spans not exported yet and stops the SDK (the process is about to end). */
export async function stopTracing(): Promise<void> {
  const a = active;
  active = null;
  await a?.shutdown().catch(() => undefined);
}
