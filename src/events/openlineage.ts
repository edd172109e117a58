/**
 * OpenLineage run events (https://openlineage.io, docs/operations.md "OpenLineage"): each run that reads a sheet is
 * a run of a job (namespace OPENLINEAGE_NAMESPACE, name: the feed or the mapping), reading the sheet (the input
 * dataset) and writing to the product API (the output dataset: its base URL and the owner). A START when it starts,
 * then exactly one COMPLETE, ABORT or FAIL, under one runId. Pure: the callers gather the facts (run-lineage.ts).
 * Every facet names the schema it follows; the tests check each event against schemas/openlineage-events.json (our
 * own schema after the specification), which checks a facet's fields only when it has its entry there.
 */
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { redact } from '../redact.ts';
import type { RunSummary } from '../pipeline/report/report.ts';
import type { ColumnStatsFile } from '../pipeline/run/column-stats.ts';

/** Who made the events (the `producer` of each event and `_producer` of each facet). */
export const PRODUCER = 'urn:product-sync';
const RUN_EVENT = 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent';
const FACET_SCHEMAS = {
  schema: 'https://openlineage.io/spec/facets/1-0-0/SchemaDatasetFacet.json#/$defs/SchemaDatasetFacet',
  dataQualityMetrics:
    'https://openlineage.io/spec/facets/1-0-2/DataQualityMetricsInputDatasetFacet.json#/$defs/DataQualityMetricsInputDatasetFacet',
  outputStatistics:
    'https://openlineage.io/spec/1-0-1/OutputStatisticsOutputDatasetFacet.json#/$defs/OutputStatisticsOutputDatasetFacet',
  dataQualityAssertions:
    'https://openlineage.io/spec/1-0-1/DataQualityAssertionsDatasetFacet.json#/$defs/DataQualityAssertionsDatasetFacet',
  errorMessage: 'https://openlineage.io/spec/facets/1-0-0/ErrorMessageRunFacet.json#/$defs/ErrorMessageRunFacet',
  nominalTime: 'https://openlineage.io/spec/1-0-1/NominalTimeRunFacet.json#/$defs/NominalTimeRunFacet',
  jobType: 'https://openlineage.io/spec/facets/2-0-4/JobTypeJobFacet.json#/$defs/JobTypeJobFacet',
  parent: 'https://openlineage.io/spec/facets/1-1-0/ParentRunFacet.json#/$defs/ParentRunFacet',
  // Ours: what product-sync knows the run by (its run id, its job, its report), for a reader going back to it.
  productSync: 'urn:product-sync:facets:run:1',
} as const;

/** An OpenLineage RunEvent, as sent (JSON). */
export type LineageEvent = Record<string, unknown> & { eventType: 'START' | 'COMPLETE' | 'ABORT' | 'FAIL' };

/** A dataset: where it lives (`namespace`) and its name there. */
export interface LineageDataset {
  namespace: string;
  name: string;
}

/** A parent run, as the `parent` facet names it: its runId and its job. */
export interface LineageParent {
  runId: string;
  namespace: string;
  name: string;
}

/** A run as its OpenLineage events tell it. */
export interface LineageRun {
  /** The OpenLineage runId (see {@link lineageRunId}). */
  runId: string;
  namespace: string;
  /**
   * The job's name: the feed, else the mapping (without extension); `.validate` etc. for runs that do not import; an
   * undo's is the undone run's; a queued chunk's, its run's with `.push`.
   */
  job: string;
  kind: 'import' | 'validate' | 'reconcile' | 'undo' | 'chunk';
  input: LineageDataset | null;
  /** The product API and owner; null when the run writes nothing (validate, reconcile, a dry run). */
  output: LineageDataset | null;
  /** A scheduled feed run: when its tick was due. */
  nominalTime?: string;
  /** The run this one is part of (a queued chunk: its import run): the `parent` run facet. */
  parent?: LineageParent;
  /** product-sync's own names of the run: its run id, its job, where it came from, its report. */
  facts: Record<string, string | undefined>;
}

const NS = Buffer.from('6f0d5a4e3b2c4d1e9f8a7b6c5d4e3f2a', 'hex');

/**
 * The OpenLineage runId of a run: a UUID v5 of what product-sync knows it by (`key`: an inline run's id and start
 * time, kept in run.json across resumes; a queued run's job and its queued time, the same on every retry), so a run
 * killed and resumed keeps its runId and still ends with one terminal event.
 */
export function lineageRunId(key: string): string {
  const b = createHash('sha1').update(NS).update(key).digest().subarray(0, 16);
  b[6] = (b[6]! & 0x0f) | 0x50;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** The job name of a run: its feed, else its mapping file's name without extension; suffixed by kind unless import. */
export function lineageJobName(kind: LineageRun['kind'], mapping: string, feed?: string): string {
  const base = feed ?? (mapping.split(/[\\/]/).pop() ?? mapping).replace(/\.(ya?ml|json)$/i, '');
  return kind === 'import' ? base : `${base}.${kind}`;
}

/**
 * The dataset of a sheet by where it came from: a URL (a feed's HTTPS, SFTP or S3 source: `https://host`,
 * `sftp://host:port`, `s3://bucket`, the path or key as name; credentials dropped) or a local path
 * (`file://<this host>`, the absolute path).
 */
export function sheetDataset(location: string): LineageDataset {
  const m = /^(https?|sftp|s3):\/\//i.exec(location);
  if (m) {
    try {
      const u = new URL(location);
      const path = decodeURIComponent(u.pathname);
      return u.protocol === 's3:'
        ? { namespace: `s3://${u.hostname}`, name: path.replace(/^\/+/, '') }
        : { namespace: `${u.protocol}//${u.host}`, name: path || '/' };
    } catch {
      // Not a URL after all: a local path.
    }
  }
  return { namespace: `file://${hostname()}`, name: resolve(location) };
}

/** The dataset the run writes to: the product API (its base URL without a trailing slash) and the owner company. */
export function apiDataset(baseUrl: string, owner: string): LineageDataset {
  const u = new URL(baseUrl);
  return { namespace: `${u.origin}${u.pathname.replace(/\/+$/, '')}`, name: owner };
}

function facet(name: keyof typeof FACET_SCHEMAS, body: Record<string, unknown>): Record<string, unknown> {
  return { _producer: PRODUCER, _schemaURL: FACET_SCHEMAS[name], ...body };
}

function base(run: LineageRun, eventType: LineageEvent['eventType'], at: string): LineageEvent {
  const runFacets: Record<string, unknown> = {
    productSync: facet('productSync', dropUndefined(run.facts)),
    ...(run.nominalTime ? { nominalTime: facet('nominalTime', { nominalStartTime: run.nominalTime }) } : {}),
    ...(run.parent
      ? {
          parent: facet('parent', {
            run: { runId: run.parent.runId },
            job: { namespace: run.parent.namespace, name: run.parent.name },
          }),
        }
      : {}),
  };
  return {
    eventType,
    eventTime: at,
    producer: PRODUCER,
    schemaURL: RUN_EVENT,
    run: { runId: run.runId, facets: runFacets },
    job: {
      namespace: run.namespace,
      name: run.job,
      facets: {
        jobType: facet('jobType', {
          processingType: 'BATCH',
          integration: 'PRODUCT_SYNC',
          jobType: run.kind.toUpperCase(),
        }),
      },
    },
    inputs: run.input ? [{ ...run.input }] : [],
    outputs: run.output ? [{ ...run.output }] : [],
  };
}

/** START: the run began (its datasets without facets: nothing is known of them yet). */
export function lineageStart(run: LineageRun, at: string): LineageEvent {
  return base(run, 'START', at);
}

/** What the end of a run that wrote its report tells: its summary and what the second pass counted. */
export interface LineageEnd {
  summary: Pick<RunSummary, 'counts' | 'issues' | 'finishedAt' | 'aborted' | 'exitCode'>;
  stats: ColumnStatsFile | null;
  /** True when the run ended early (run.aborted): ABORT, else COMPLETE. */
  aborted: boolean;
}

/**
 * COMPLETE (the run wrote its report, whatever its rows' outcomes) or ABORT (it stopped early): the sheet with its
 * columns and quality metrics, the API with the rows written and the checks' results.
 */
export function lineageEnd(run: LineageRun, end: LineageEnd): LineageEvent {
  const { summary, stats } = end;
  const event = base(run, end.aborted ? 'ABORT' : 'COMPLETE', summary.finishedAt);
  const assertions = assertionsOf(summary.issues ?? [], stats);
  if (run.input) {
    const facets: Record<string, unknown> = {};
    if (stats) facets.schema = facet('schema', { fields: stats.headers.map((name) => ({ name })) });
    if (!run.output) facets.dataQualityAssertions = facet('dataQualityAssertions', { assertions });
    const columnMetrics: Record<string, { nullCount: number; distinctCount: number }> = {};
    for (const [name, c] of Object.entries(stats?.columns ?? {}))
      columnMetrics[name] = { nullCount: c.nullCount, distinctCount: c.distinctCount };
    event.inputs = [
      {
        ...run.input,
        facets,
        inputFacets: {
          dataQualityMetrics: facet('dataQualityMetrics', { rowCount: summary.counts.rows, columnMetrics }),
        },
      },
    ];
  }
  if (run.output) {
    const c = summary.counts;
    event.outputs = [
      {
        ...run.output,
        facets: { dataQualityAssertions: facet('dataQualityAssertions', { assertions }) },
        outputFacets: {
          outputStatistics: facet('outputStatistics', {
            rowCount: c.created + c.updated + c.archived + c.unarchived + (c.duplicateRemoved ?? 0),
          }),
        },
      },
    ];
  }
  if (end.aborted)
    (event.run as { facets: Record<string, unknown> }).facets.errorMessage = errorFacet(summary.aborted ?? 'aborted');
  return event;
}

/**
 * COMPLETE (or ABORT, with why) of a run that reads no sheet of its own: a queued chunk, an undo. The output dataset
 * gets `outputStatistics` when `rowsWritten` is given (an undo: the items it put back).
 */
export function lineageDone(
  run: LineageRun,
  at: string,
  end: { aborted?: string; rowsWritten?: number } = {},
): LineageEvent {
  const event = base(run, end.aborted === undefined ? 'COMPLETE' : 'ABORT', at);
  if (run.output && end.rowsWritten !== undefined)
    event.outputs = [
      {
        ...run.output,
        outputFacets: { outputStatistics: facet('outputStatistics', { rowCount: end.rowsWritten }) },
      },
    ];
  if (end.aborted !== undefined)
    (event.run as { facets: Record<string, unknown> }).facets.errorMessage = errorFacet(end.aborted);
  return event;
}

/** FAIL: the run ended without a report (a bad mapping, an unreadable file, retries exhausted). */
export function lineageFail(run: LineageRun, err: unknown, at: string): LineageEvent {
  const event = base(run, 'FAIL', at);
  const e = err as { message?: unknown; code?: unknown };
  const message = String(e?.message ?? err);
  const code = typeof e?.code === 'string' && !message.includes(e.code) ? ` [${e.code}]` : '';
  (event.run as { facets: Record<string, unknown> }).facets.errorMessage = errorFacet(`${message}${code}`);
  return event;
}

function errorFacet(message: string): Record<string, unknown> {
  return facet('errorMessage', { message: redact(message).slice(0, 2000), programmingLanguage: 'JavaScript' });
}

/**
 * The checks of a run, as assertions: each issue code on each column (or the whole row) that rows failed
 * (success: false), and for each mapped column that no issue names, `valid` (success: true).
 */
function assertionsOf(
  issues: NonNullable<RunSummary['issues']>,
  stats: ColumnStatsFile | null,
): { assertion: string; success: boolean; column?: string }[] {
  const out: { assertion: string; success: boolean; column?: string }[] = issues.map((i) => ({
    assertion: i.code,
    success: false,
    ...(i.column ? { column: i.column } : {}),
  }));
  const named = new Set(issues.map((i) => i.column));
  for (const column of Object.keys(stats?.columns ?? {}))
    if (!named.has(column)) out.push({ assertion: 'valid', success: true, column });
  return out;
}

function dropUndefined(o: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(o).filter((e): e is [string, string] => e[1] !== undefined));
}
