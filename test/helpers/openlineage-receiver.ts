// An OpenLineage endpoint over loopback (node:http), as Marquez's /api/v1/lineage would take events: each event is
// checked with ajv (an implementation independent of ours) against schemas/openlineage-events.json, product-sync's
// own JSON Schema of its run events, written after the OpenLineage specification (schemas/README.md). Every event is
// recorded with its check's errors; an event that fails the check is answered 400 (and so retried, then kept as dead).
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { useStarted } from './use-started.ts';
import { bodyOf } from './webhook-receiver.ts';

const SCHEMA = new URL('../../schemas/openlineage-events.json', import.meta.url);
// ajv-formats is CommonJS: its function is the default export's default under Node's ESM loader.
const addFormats = (addFormatsModule as unknown as { default: (ajv: Ajv2020) => Ajv2020 }).default;

/** The check of one event: its errors (empty: valid). */
export type LineageCheck = (event: unknown) => string[];

/** The validator of OpenLineage run events: strict ajv, formats (date-time, uri, uuid) checked, no network. */
export function lineageValidator(): LineageCheck {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  addFormats(ajv);
  const validate = ajv.compile(JSON.parse(readFileSync(SCHEMA, 'utf8')) as object);
  return (event) =>
    validate(event)
      ? []
      : (validate.errors ?? []).map(
          (e) => `${e.instancePath || '/'} ${e.message ?? e.keyword} ${JSON.stringify(e.params)}`,
        );
}

/** One event as received: its body, the check's errors, its Authorization header. */
export interface LineageReceived {
  event: LineageEventBody;
  errors: string[];
  authorization: string | undefined;
}

/** The parts of a RunEvent the tests read. */
export interface LineageEventBody {
  eventType: string;
  eventTime: string;
  run: { runId: string; facets?: Record<string, Record<string, unknown>> };
  job: { namespace: string; name: string };
  inputs: {
    namespace: string;
    name: string;
    facets?: Record<string, Record<string, unknown>>;
    inputFacets?: Record<string, Record<string, unknown>>;
  }[];
  outputs: {
    namespace: string;
    name: string;
    facets?: Record<string, Record<string, unknown>>;
    outputFacets?: Record<string, Record<string, unknown>>;
  }[];
}

export interface LineageReceiver {
  url: string;
  received: LineageReceived[];
  /** The events of one OpenLineage run, in arrival order, identical redeliveries once. */
  runs(): Map<string, LineageEventBody[]>;
  close(): Promise<void>;
}

/** Starts a receiver on a free loopback port (`/api/v1/lineage`). */
export async function startLineageReceiver(): Promise<LineageReceiver> {
  const check = lineageValidator();
  const received: LineageReceived[] = [];
  const server = createServer((req, res) => {
    void bodyOf(req).then((text) => {
      let event: LineageEventBody;
      try {
        event = JSON.parse(text) as LineageEventBody;
      } catch {
        res.writeHead(400).end('not JSON');
        return;
      }
      const errors = check(event);
      received.push({ event, errors, authorization: req.headers.authorization });
      res.writeHead(errors.length === 0 ? 201 : 400).end(errors.join('\n'));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/api/v1/lineage`,
    received,
    runs() {
      const out = new Map<string, LineageEventBody[]>();
      const seen = new Set<string>();
      for (const r of received) {
        const key = JSON.stringify(r.event);
        if (seen.has(key)) continue;
        seen.add(key);
        const list = out.get(r.event.run.runId) ?? [];
        list.push(r.event);
        out.set(r.event.run.runId, list);
      }
      return out;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The receiver of a test file: started before its tests (beforeAll), closed after them (afterAll). */
export function useLineageReceiver(): LineageReceiver {
  return useStarted(startLineageReceiver, 'the receiver');
}

/** The kind of run an event tells (its job's jobType facet: IMPORT, UNDO, CHUNK…). */
export const jobTypeOf = (e: LineageEventBody): string | undefined =>
  (e.job as { facets?: { jobType?: { jobType?: string } } }).facets?.jobType?.jobType;
