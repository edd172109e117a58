// An OTLP/HTTP trace receiver over loopback (node:http), as an OpenTelemetry collector takes spans: POST /v1/traces,
// JSON encoding (ExportTraceServiceRequest). Every span is kept with the service.name of the process that sent it.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { useStarted } from './use-started.ts';

/** A span as received (the fields the tests read). */
export interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: Record<string, unknown> }[];
  service: string;
}

export interface OtlpCollector {
  /** What OTEL_EXPORTER_OTLP_ENDPOINT is set to. */
  url: string;
  spans: Span[];
  close(): Promise<void>;
}

/** A span's attribute value (whatever its type). */
export const attr = (s: Span, key: string): unknown => {
  const v = s.attributes.find((a) => a.key === key)?.value;
  return v ? Object.values(v)[0] : undefined;
};

/** A collector for the tests of a file: started before them, closed after; read it inside a test or a hook. */
export function useOtlpCollector(): OtlpCollector {
  return useStarted(startOtlpCollector, 'the collector');
}

/** Starts a collector on a free loopback port; anything but JSON to /v1/traces is refused (415). */
export async function startOtlpCollector(): Promise<OtlpCollector> {
  const spans: Span[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url !== '/v1/traces' || !String(req.headers['content-type']).includes('json')) {
        res.writeHead(415).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans: {
          resource: { attributes: { key: string; value: { stringValue?: string } }[] };
          scopeSpans: { spans: Omit<Span, 'service'>[] }[];
        }[];
      };
      for (const rs of body.resourceSpans) {
        const service = rs.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue ?? '';
        for (const ss of rs.scopeSpans) for (const s of ss.spans) spans.push({ ...s, service });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The spans of `service` in the trace `traceId` that hang from no span of that trace (empty: one tree). */
export function orphans(collector: OtlpCollector, traceId: string, service: string): string[] {
  const ids = new Set(collector.spans.filter((s) => s.traceId === traceId).map((s) => s.spanId));
  return collector.spans
    .filter((s) => s.traceId === traceId && s.service === service)
    .filter((s) => !s.parentSpanId || !ids.has(s.parentSpanId))
    .map((s) => s.name);
}
