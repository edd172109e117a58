import { basename } from 'node:path';
import { Job, UnrecoverableError, type BackoffStrategy, type Queue } from 'bullmq';
import type { Config } from '../config.ts';
import { logger } from '../logger.ts';
import { retryDelay } from '../events/backoff.ts';
import { makeEvent, type ProductSyncEvent } from '../events/catalog.ts';
import { deliverOnce } from '../events/deliver.ts';
import { loadEndpoints, shownUrl, wants, type Endpoint } from '../events/endpoints.ts';
import { runEndEvent, runFailedEvent, runStartedEvent, type EndedRun, type RunOrigin } from '../events/run-events.ts';
import { lineageEnd, lineageFail, lineageStart, type LineageEvent } from '../events/openlineage.ts';
import { lineageRun, lineageSettings, type LineageSettings } from '../events/run-lineage.ts';
import { lineageFacts } from '../pipeline/run/column-stats.ts';
import { deliverJobId, deliverJobSchema, JOB_OPTIONS, type DeliverJobData, type ImportJobData } from './catalog.ts';

/**
 * Records events in the `events` queue: one delivery job per (event, endpoint that wants it), under an id made of
 * both, so recording an event again (a step redone after a crash) adds nothing. Recording is one Redis write; the
 * delivery is the events worker's, so a slow endpoint never delays a run. Callers record an event BEFORE they
 * acknowledge the state it reports (return the job, write the feed's hash): a process killed in between redoes the
 * step and records the same event again, which is then a no-op.
 */
export class EventRecorder {
  constructor(
    readonly queue: Queue,
    readonly endpoints: readonly Endpoint[],
    readonly publicUrl?: string,
    /** OPENLINEAGE_URL's settings: runs' events also make OpenLineage events (null: none). */
    readonly lineage: LineageSettings | null = null,
  ) {}

  /**
   * Queues `event` for every endpoint that wants it (none configured: nothing is written); `lineage`, the OpenLineage
   * event that goes with it, for the OpenLineage endpoint.
   */
  async record(event: ProductSyncEvent, lineage?: LineageEvent): Promise<void> {
    const targets = this.endpoints.filter((e) => wants(e, event.type, lineage));
    if (targets.length === 0) return;
    await this.queue.addBulk(
      targets.map((e) => ({
        name: 'deliver',
        data: {
          event,
          endpoint: e.id,
          ...(e.kind === 'openlineage' && lineage ? { lineage } : {}),
        } satisfies DeliverJobData,
        opts: { ...JOB_OPTIONS.events, jobId: deliverJobId(event.id, e.id) },
      })),
    );
  }

  /**
   * Queues an OpenLineage event that goes with no webhook event (a queued chunk's): to the OpenLineage endpoint only,
   * under the id of `type` and `key`, so recording it again (a chunk retried, its worker killed) adds nothing.
   */
  async recordLineage(type: 'run.started' | 'run.finished' | 'run.failed', key: string, lineage: LineageEvent) {
    const targets = this.endpoints.filter((e) => e.kind === 'openlineage');
    if (targets.length === 0) return;
    const event = makeEvent(type, key, { lineage: String(lineage.eventType) });
    await this.queue.addBulk(
      targets.map((e) => ({
        name: 'deliver',
        data: { event, endpoint: e.id, lineage } satisfies DeliverJobData,
        opts: { ...JOB_OPTIONS.events, jobId: deliverJobId(event.id, e.id) },
      })),
    );
  }

  /** The parent its chunks name (the `parent` facet): an import job's OpenLineage run and job; null when off. */
  lineageParentOf(job: Job): { runId: string; namespace: string; name: string } | null {
    const run = this.lineageRunOf(job);
    return run ? { runId: run.runId, namespace: run.namespace, name: run.job } : null;
  }

  /** run.queued, for an import job just added (keyed by the job and its queued time: a re-run is a new event). */
  runQueued(job: Job): Promise<void> {
    const d = job.data as ImportJobData;
    return this.record(
      makeEvent(
        'run.queued',
        `${job.id}@${job.timestamp}`,
        {
          jobId: job.id,
          origin: d.origin,
          feed: d.feed,
          file: d.fileName ?? basename(d.request.file),
          mapping: basename(d.request.mapping),
          mode: d.request.mode ?? 'upsert',
          dryRun: Boolean(d.request.dryRun),
        },
        new Date(job.timestamp),
      ),
    );
  }

  /** run.started, when a worker takes an import job's first step (its retries record the same event). */
  runStarted(job: Job): Promise<void> {
    const d = job.data as ImportJobData;
    const startedAt = new Date(job.processedOn ?? Date.now()).toISOString();
    const run = this.lineageRunOf(job);
    return this.record(
      runStartedEvent(`${job.id}@${job.timestamp}`, this.origin(job), {
        file: d.request.file,
        mapping: basename(d.request.mapping),
        startedAt,
      }),
      run ? lineageStart(run, startedAt) : undefined,
    );
  }

  /** run.finished or run.aborted, once the run's report is written (keyed by the run id). */
  async runEnded(job: Job, result: EndedRun): Promise<void> {
    const event = runEndEvent(result, this.origin(job));
    const facts = this.lineage ? await lineageFacts(result.reportDir) : null;
    const run =
      facts && this.lineageRunOf(job, { owner: facts.owner, runId: result.runId, reportDir: result.reportDir });
    return this.record(
      event,
      run
        ? lineageEnd(run, { summary: result.summary, stats: facts.stats, aborted: event.type === 'run.aborted' })
        : undefined,
    );
  }

  /** run.failed, when an import job fails for good. */
  runFailed(job: Job, err: unknown): Promise<void> {
    const d = job.data as ImportJobData;
    const run = this.lineageRunOf(job);
    return this.record(
      runFailedEvent(
        `${job.id}@${job.timestamp}`,
        this.origin(job),
        { runId: d.runId, file: d.request.file, mapping: basename(d.request.mapping) },
        err,
      ),
      run ? lineageFail(run, err, new Date().toISOString()) : undefined,
    );
  }

  /**
   * The OpenLineage run of an import job (null: no OpenLineage endpoint). Its runId comes from the job and its queued
   * time, as its run.started and run.failed ids do: the same on every retry and after a worker was killed.
   */
  lineageRunOf(job: Job, end?: { owner: string | null; runId: string; reportDir: string }) {
    if (!this.lineage) return null;
    const d = job.data as ImportJobData;
    return lineageRun(this.lineage, {
      key: `${job.id}@${job.timestamp}`,
      kind: 'import',
      mapping: d.request.mapping,
      feed: d.feed,
      source: d.sourceLocation ?? d.request.file,
      owner: end?.owner ?? d.request.owner,
      writes: !d.request.dryRun,
      // A scheduled feed run: when its schedule's tick was due.
      nominalTime: d.nominalTime,
      facts: { jobId: job.id, origin: d.origin, runId: end?.runId ?? d.runId, reportDir: end?.reportDir },
    });
  }

  /** run.failed for a feed tick whose source could not be listed or read: no run could start (keyed by the tick). */
  sourceFailed(feed: string, tick: Job, source: string, mapping: string, error: string): Promise<void> {
    return this.record(
      runFailedEvent(
        `${feed}@${tick.id}`,
        { jobId: tick.id!, origin: 'feed', feed, publicUrl: this.publicUrl },
        { file: source, isSourceLabel: true, mapping: basename(mapping) },
        { message: error },
      ),
    );
  }

  /** feed.no_new_file, when a feed tick queues nothing (keyed by the tick's job). */
  noNewFile(feed: string, tick: Job, reason: string, file: string | null): Promise<void> {
    const at = new Date();
    return this.record(
      makeEvent(
        'feed.no_new_file',
        `${feed}@${tick.id}`,
        { feed, tickAt: at.toISOString(), reason, file: file === null ? null : basename(file) },
        at,
      ),
    );
  }

  private origin(job: Job): RunOrigin {
    const d = job.data as ImportJobData;
    return { jobId: job.id!, origin: d.origin, feed: d.feed, publicUrl: this.publicUrl };
  }
}

/** The recorder of a configuration: its endpoints (WEBHOOK_URL, WEBHOOKS_FILE) over the events queue. */
export async function eventRecorder(config: Config, queue: Queue): Promise<EventRecorder> {
  return new EventRecorder(queue, await loadEndpoints(config), config.PUBLIC_URL, lineageSettings(config));
}

// The recorder of each import queue of this process: enqueueImport records run.queued through it, whoever calls it
// (the console, `enqueue`, a feed tick).
const recorders = new WeakMap<Queue, Promise<EventRecorder | null>>();

/** Attaches `recorder` to `importQueue`: every import enqueueImport adds to it then records its run.queued. */
export function recordEventsOf(importQueue: Queue, recorder: Promise<EventRecorder | null>): void {
  // An unhandled rejection here would kill the process: the enqueue that awaits it reports the problem.
  recorder.catch(() => undefined);
  recorders.set(importQueue, recorder);
}

/** The recorder attached to `importQueue` (recordEventsOf), if any. */
export function recorderOf(importQueue: Queue): Promise<EventRecorder | null> {
  return recorders.get(importQueue) ?? Promise.resolve(null);
}

/** The backoff of delivery jobs (BullMQ's custom strategy: the worker's `settings.backoffStrategy`). */
export function deliveryBackoff(config: Config): BackoffStrategy {
  return (attemptsMade, _type, _err, job) =>
    retryDelay(attemptsMade, {
      baseMs: config.WEBHOOK_RETRY_BASE_MS,
      windowMs: config.WEBHOOK_RETRY_WINDOW_SECONDS * 1000,
      since: (job?.data as DeliverJobData | undefined)?.since ?? job?.timestamp ?? Date.now(),
    });
}

/** Delivers one `deliver` job; throws (and BullMQ retries with deliveryBackoff) unless the endpoint accepted it. */
export async function processDelivery(job: Job, endpoints: readonly Endpoint[], config: Config): Promise<unknown> {
  const parsed = deliverJobSchema.safeParse(job.data);
  if (!parsed.success) throw new UnrecoverableError('invalid delivery job payload');
  const { event, endpoint: id, lineage } = parsed.data;
  const endpoint = endpoints.find((e) => e.id === id);
  if (!endpoint) throw new UnrecoverableError(`webhook endpoint ${id} is not configured on this worker`);
  try {
    const status = await deliverOnce(endpoint, event, config.WEBHOOK_TIMEOUT_MS, lineage);
    return { status, attempts: job.attemptsMade + 1 };
  } catch (err) {
    logger.info(
      { event: event.type, id: event.id, endpoint: id, attempt: job.attemptsMade + 1, err: (err as Error).message },
      'event delivery failed: retried later',
    );
    throw err;
  }
}

/** A dead event (its delivery out of retries) as the console lists it. */
export interface DeadEvent {
  /** The delivery job (the redeliver action's id). */
  jobId: string;
  /** The event's id, its `webhook-id` on every delivery. */
  id: string;
  type: string;
  endpoint: string;
  url: string | null;
  attempts: number;
  failedReason: string | null;
  timestamp: string;
  failedAt: string | null;
}

/** The dead events, most recently failed first (`limit` at most). */
export async function deadEvents(queue: Queue, endpoints: readonly Endpoint[], limit = 100): Promise<DeadEvent[]> {
  const jobs = (await queue.getFailed(0, limit * 2)).filter((j): j is Job => Boolean(j) && j.name === 'deliver');
  return jobs
    .map((j) => {
      const d = j.data as DeliverJobData;
      const e = endpoints.find((x) => x.id === d.endpoint);
      return {
        jobId: j.id!,
        id: d.event.id,
        type: d.event.type,
        endpoint: d.endpoint,
        url: e ? shownUrl(e.url) : null,
        attempts: j.attemptsMade,
        failedReason: j.failedReason ?? null,
        timestamp: d.event.timestamp,
        failedAt: j.finishedOn ? new Date(j.finishedOn).toISOString() : null,
      };
    })
    .sort((a, b) => (b.failedAt ?? '').localeCompare(a.failedAt ?? ''))
    .slice(0, limit);
}

/**
 * Queues a dead event again: the same job, so the same event id (`webhook-id`) and body; its retry window starts
 * again now. 'not-found' when no such job is kept, 'not-dead' when it is not a failed delivery.
 */
export async function redeliver(queue: Queue, jobId: string): Promise<'queued' | 'not-found' | 'not-dead'> {
  const job = await Job.fromId(queue, jobId);
  if (!job || job.name !== 'deliver') return 'not-found';
  if ((await job.getState()) !== 'failed') return 'not-dead';
  await job.updateData({ ...(job.data as DeliverJobData), since: Date.now() });
  await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
  logger.info({ jobId, id: (job.data as DeliverJobData).event.id }, 'dead event queued again');
  return 'queued';
}
