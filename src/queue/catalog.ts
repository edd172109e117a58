import { readFile } from 'node:fs/promises';
import { UnrecoverableError } from 'bullmq';
import * as z from 'zod';
import { ProductSyncError } from '../errors.ts';
import { EVENT_TYPE_NAMES, type EventType } from '../events/catalog.ts';
import { MODES } from '../pipeline/sync/plan.ts';
import { scopeSchema } from '../pipeline/scope.ts';
import { gateSchema, mappingFile } from '../pipeline/map/mapping.ts';
import { identityHash, sha256File } from '../pipeline/run/run-state.ts';

/** The queues (docs/queue.md "Topology"), all under one prefix. */
export const QUEUES = { import: 'import', push: 'push', feeds: 'feeds', events: 'events' } as const;

/** Payload of an import (parent) job. */
export const importJobSchema = z.object({
  request: z.object({
    file: z.string().min(1),
    mapping: z.string().min(1),
    owner: z.uuid().optional(),
    mode: z.enum(MODES as unknown as [string, ...string[]]).optional(),
    dryRun: z.boolean().optional(),
    language: z.string().optional(),
    sheet: z.string().optional(),
    allowArchive: z.boolean().optional(),
    maxArchiveRatio: z.number().min(0).max(1).optional(),
    /** The feed's scope, when it overrides the mapping's. */
    scope: scopeSchema.optional(),
    archiveDespiteInvalidKeys: z.boolean().optional(),
    /** summary.json `notes` of the run: what its feed tick skipped (mode full). */
    notes: z.array(z.string()).optional(),
    /** Apply the run even over its quality gate (`enqueue --waive-gate`, the console's Apply anyway). */
    waiveGate: z.boolean().optional(),
    /** The feed's quality gate, which replaces the mapping's. */
    gate: gateSchema.optional(),
    /** The feed's own rules: the file holding them (a rules file, or the feed file). */
    rules: z.string().optional(),
  }),
  origin: z.enum(['cli', 'upload', 'feed']),
  feed: z.string().optional(),
  /** Original file name of an upload, for display only. */
  fileName: z.string().optional(),
  /** A feed's remote file: where it was downloaded from (its source's URL, no secret), for OpenLineage. */
  sourceLocation: z.string().optional(),
  sha256: z.string().optional(),
  /** A feed's run queued by a tick of its schedule: when that tick was due (ISO 8601), OpenLineage's nominalTime. */
  nominalTime: z.string().optional(),
  step: z.enum(['prepare', 'wait', 'finalize']).default('prepare'),
  runId: z.string().optional(),
  workDir: z.string().optional(),
  chunks: z.number().int().optional(),
  /** How long the run may wait for its owner's lease (`--wait-lock`); unset: as long as it takes. */
  waitLockSeconds: z.number().min(0).optional(),
  /** When it first found the lease busy (ms since the epoch). */
  leaseWaitSince: z.number().optional(),
});

/** Payload of a push (child) job: one chunk of row plans, or of archives. */
export const pushJobSchema = z.object({
  runId: z.string(),
  workDir: z.string(),
  kind: z.enum(['rows', 'archives']),
  index: z.number().int(),
  /** The run's owner (its lease's): the per-owner cap and the queue wait per owner (absent: jobs of older versions). */
  owner: z.string().optional(),
  /** The run's plans the chunk belongs to (RunState.plan; absent: the first). */
  plan: z.number().int().min(1).optional(),
  /**
   * OPENLINEAGE_URL set: the chunk is a run of its own whose `parent` facet names its import's run (its runId and job);
   * absent: no OpenLineage event for the chunk.
   */
  lineage: z.object({ runId: z.string(), namespace: z.string(), name: z.string() }).optional(),
});

/** Payload of a feed tick. */
export const feedJobSchema = z.object({
  feed: z.string(),
  /** A tick queued by the end of the feed's previous import (not by its schedule): it says nothing when idle. */
  followUp: z.boolean().optional(),
});

/** Payload of an event delivery: one event to one endpoint (named by its id: its secret stays out of Redis). */
export const deliverJobSchema = z.object({
  event: z.object({
    id: z.string().min(1),
    type: z.enum(EVENT_TYPE_NAMES as [EventType, ...EventType[]]),
    timestamp: z.string(),
    data: z.record(z.string(), z.unknown()),
  }),
  endpoint: z.string().min(1),
  /** To the OpenLineage endpoint: the OpenLineage event sent instead of the event (src/events/openlineage.ts). */
  lineage: z.record(z.string(), z.unknown()).optional(),
  /** When its retry window started (ms since the epoch): the job's creation, or its last redelivery. */
  since: z.number().optional(),
});

/** Payload of a feed's deadline check (`expect:`), one job scheduler per feed. */
export const deadlineJobSchema = z.object({ feed: z.string(), deadline: z.literal(true) });

/** Id of an event's delivery job: one per event and endpoint, so recording an event twice delivers it once. */
export function deliverJobId(eventId: string, endpointId: string): string {
  return `${eventId}-${endpointId}`;
}

export type DeliverJobData = z.output<typeof deliverJobSchema>;
export type ImportJobData = z.input<typeof importJobSchema>;
export type PushJobData = z.output<typeof pushJobSchema>;

/**
 * Retry options per queue: a chunk is retried with backoff (not the file); an import retries its own retryable
 * failures.
 */
export const JOB_OPTIONS = {
  // An import retries only what may pass later (API unavailable while preparing); each step is safe to redo.
  import: {
    attempts: 3,
    backoff: { type: 'exponential', delay: 15_000 },
    removeOnComplete: { age: 30 * 24 * 3600, count: 10_000 },
    removeOnFail: { age: 30 * 24 * 3600 },
  },
  push: {
    attempts: 6,
    backoff: { type: 'exponential', delay: 2000 },
    removeOnComplete: { age: 7 * 24 * 3600 },
    removeOnFail: { age: 30 * 24 * 3600 },
  },
  feeds: { attempts: 1, removeOnComplete: { count: 1000 }, removeOnFail: { count: 1000 } },
  // The custom backoff (events/backoff.ts) decides: retried with growing delays for WEBHOOK_RETRY_WINDOW_SECONDS,
  // then kept as failed (a dead event, redelivered from the console). Delivered ones are kept a week: a step redone
  // within it records its events again under the same job ids, and BullMQ adds nothing.
  events: {
    attempts: 100_000,
    backoff: { type: 'webhook' },
    removeOnComplete: { age: 7 * 24 * 3600 },
    removeOnFail: { age: 30 * 24 * 3600 },
  },
  deadline: {
    attempts: 3,
    backoff: { type: 'fixed', delay: 1000 },
    removeOnComplete: { count: 1000 },
    removeOnFail: { count: 1000 },
  },
} as const;

/**
 * Id of a chunk job: one per run, plan, kind and index, so a parent that redoes its prepare step adds no chunk twice
 * (and one that plans again, RunState.plan, adds its new chunks).
 */
export function pushJobId(d: Pick<PushJobData, 'runId' | 'kind' | 'index' | 'plan'>): string {
  return `${d.runId}${d.plan ? `-p${d.plan}` : ''}-${d.kind}-${d.index}`;
}

/**
 * The job catalog on one screen: per queue, the job names it carries, the payload schema, the retry options and how
 * job ids are made. Every queue needs a handler (`checkHandlers`) or the worker does not start.
 */
export const JOB_CATALOG = {
  import: {
    names: ['import'],
    schema: importJobSchema,
    options: JOB_OPTIONS.import,
    id: 'importJobId: sheet sha256 + mapping + owner + mode + dry run',
  },
  push: {
    names: ['rows', 'archives'],
    schema: pushJobSchema,
    options: JOB_OPTIONS.push,
    id: 'pushJobId: run id + plan (after the first) + kind + index',
  },
  feeds: {
    names: ['feed-tick'],
    schema: feedJobSchema,
    options: JOB_OPTIONS.feeds,
    id: 'BullMQ job scheduler per feed (scheduler id = feed id)',
  },
  events: {
    names: ['deliver', 'feed-deadline'],
    schema: z.union([deliverJobSchema, deadlineJobSchema]),
    options: JOB_OPTIONS.events,
    id: 'deliverJobId: event id (run id or job + type) + endpoint id; feed-deadline: job scheduler deadline-<feed id>',
  },
} as const;

/** A queue of the catalog. */
export type QueueName = keyof typeof JOB_CATALOG;

/** Throws unless every queue of the catalog has a handler and every handler a queue. */
export function checkHandlers(handlers: Partial<Record<string, unknown>>): void {
  const missing = Object.keys(JOB_CATALOG).filter((q) => typeof handlers[q] !== 'function');
  const unknown = Object.keys(handlers).filter((q) => !(q in JOB_CATALOG));
  if (missing.length > 0 || unknown.length > 0) {
    throw new ProductSyncError(
      'PS_ERR_QUEUE',
      `job catalog and handlers differ:${missing.length ? ` no handler for ${missing.join(', ')};` : ''}${unknown.length ? ` no catalog entry for ${unknown.join(', ')}` : ''}`,
    );
  }
}

/**
 * The payload of a job of `queue`, validated; a payload that cannot be valid on any retry is an `UnrecoverableError`.
 */
export function jobPayload<Q extends QueueName>(queue: Q, data: unknown): z.output<(typeof JOB_CATALOG)[Q]['schema']> {
  const parsed = JOB_CATALOG[queue].schema.safeParse(data);
  if (!parsed.success)
    throw new UnrecoverableError(
      `invalid ${queue} job payload: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`,
    );
  return parsed.data as z.output<(typeof JOB_CATALOG)[Q]['schema']>;
}

/**
 * Deterministic id of an import job: the same sheet, mapping, owner, mode and dry-run are one job however often
 * enqueued.
 */
export async function importJobId(data: ImportJobData): Promise<string> {
  const sheet = data.sha256 ?? (await sha256File(data.request.file));
  const mappingText = await readFile(mappingFile(data.request.mapping), 'utf8').catch(() => data.request.mapping);
  const r = data.request;
  const h = identityHash([
    mappingText,
    r.owner ?? '',
    r.mode ?? 'upsert',
    Boolean(r.dryRun),
    r.sheet ?? '',
    r.language ?? '',
    // A feed's own scope is another job (absent: job ids of feeds without one stay as they were).
    ...(r.scope !== undefined ? [r.scope] : []),
    // So are a feed's own gate and a waived gate (absent: ids stay as they were).
    ...(r.gate !== undefined ? [{ gate: r.gate }] : []),
    ...(r.rules !== undefined ? [{ rules: r.rules }] : []),
    ...(r.waiveGate ? ['waive-gate'] : []),
  ]);
  return `import-${sheet.slice(0, 20)}-${h.slice(0, 12)}`;
}
