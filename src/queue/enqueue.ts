import { resolve } from 'node:path';
import { Job, Queue, QueueEvents } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Config } from '../config.ts';
import { ERROR_CODES, ProductSyncError, type ErrorCode } from '../errors.ts';
import { mappingFile } from '../pipeline/map/mapping.ts';
import { sha256File } from '../pipeline/run/run-state.ts';
import type { RunSummary } from '../pipeline/report/report.ts';
import { importJobId, JOB_OPTIONS, QUEUES, type ImportJobData } from './catalog.ts';
import { runChunksKey } from '../redis-keys.ts';
import { queueConnection, queuePrefix, quietOnErrors } from './connection.ts';
import { eventRecorder, recordEventsOf, recorderOf } from './events-queue.ts';
import { jobLost, redisRunId, watchJob } from './job-watch.ts';
import { indexRun } from './run-index.ts';
import { importLine, pushLine } from './run-line.ts';
import { queueTelemetry } from '../tracing.ts';

/** What a finished import job returns. */
export interface ImportJobResult {
  runId: string;
  exitCode: 0 | 1 | 2 | 3;
  summary: RunSummary;
  reportDir: string;
  files: string[];
}

/**
 * Adds an import job under its deterministic id: the same sheet + mapping + owner enqueued twice is one job while it
 * waits, runs or has imported. A job of that id that failed or was aborted (exit 3: nothing or not all was sent) is
 * replaced, so enqueuing the sheet again tries again.
 *
 * `rerun`: a new run of a sheet that already ran (the console's Re-run), under the first free `<id>-rN` (N from 2):
 * the deterministic id alone would answer "already queued" and run nothing. Its run directory gets its own `-rN` from
 * runIdFor, which never reuses a directory holding a summary.json.
 *
 * The job (newly added, or already there) records its run.queued event through the recorder attached to `queue`
 * (recordEventsOf), before this returns: one event id per job and queued time, however often it is enqueued.
 */
export async function enqueueImport(
  queue: Queue,
  data: ImportJobData,
  options: { rerun?: boolean } = {},
): Promise<{ jobId: string; existed: boolean }> {
  const request = {
    ...data.request,
    file: resolve(data.request.file),
    mapping: resolve(mappingFile(data.request.mapping)),
  };
  const sha256 = data.sha256 ?? (await sha256File(request.file));
  const full: ImportJobData = { ...data, request, sha256, step: 'prepare' };
  const base = await importJobId(full);
  let jobId = base;
  if (options.rerun) {
    for (let n = 2; (await queue.getJob(jobId)) !== undefined; n++) jobId = `${base}-r${n}`;
  }
  let previous = await queue.getJob(jobId);
  if (previous) {
    const state = await previous.getState();
    if (
      state === 'failed' ||
      (state === 'completed' && (previous.returnvalue as ImportJobResult | null)?.exitCode === 3)
    ) {
      // Another enqueue may have replaced it first (then its new job is kept: remove fails on a running job).
      previous = await previous.remove().then(
        () => undefined,
        () => previous,
      );
    }
  }
  const existed = previous !== undefined;
  const job = await queue.add('import', full, { ...JOB_OPTIONS.import, jobId });
  // The runs list's order (a job already there keeps its id, and its queued time).
  const kept = existed ? await queue.getJob(jobId) : job;
  await indexRun(queue, jobId, kept?.timestamp ?? job.timestamp);
  // Before the caller hears it was queued (recordEventsOf attached a recorder to this queue, if any). A job that was
  // already there records it too, under the same event id (its id and queued time): an enqueue that died between the
  // add and this line left a job without its run.queued, and recording it again is a no-op while it is kept.
  await (await recorderOf(queue))?.runQueued(kept ?? job);
  return { jobId, existed };
}

/** A queue client for the CLI and the console: enqueue, status, wait; close() when done. */
export function importQueueClient(config: Config): {
  queue: Queue;
  enqueue(data: ImportJobData, options?: { rerun?: boolean }): Promise<{ jobId: string; existed: boolean }>;
  status(jobId: string): Promise<RunStatus | null>;
  wait(jobId: string, timeoutMs?: number): Promise<ImportJobResult>;
  close(): Promise<void>;
} {
  const connection = queueConnection(config);
  const prefix = queuePrefix(config);
  const queue = quietOnErrors(new Queue(QUEUES.import, { connection, prefix, ...queueTelemetry() }));
  const eventsQueue = quietOnErrors(new Queue(QUEUES.events, { connection, prefix, ...queueTelemetry() }));
  recordEventsOf(queue, eventRecorder(config, eventsQueue));
  let events: QueueEvents | undefined;
  let eventsConnection: ReturnType<typeof queueConnection> | undefined;
  // Redis's run_id when the job was queued, to tell a Redis restarted without its data from a job deleted.
  let runIdAtEnqueue: Promise<string | null> | undefined;
  return {
    queue,
    async enqueue(data, options) {
      runIdAtEnqueue ??= redisRunId(connection);
      await runIdAtEnqueue;
      return enqueueImport(queue, data, options);
    },
    status: (jobId) => runStatus(queue, jobId),
    async wait(jobId, timeoutMs = 24 * 3600_000) {
      runIdAtEnqueue ??= redisRunId(connection);
      // A Redis restarted without its data sends no event for a job it forgot: the job's existence is watched from
      // the start, so no step of the wait (the events' connection getting ready included) waits for ever on it.
      const watch = watchJob(queue, connection, config.REDIS_URL, jobId, runIdAtEnqueue);
      const orLost = <T>(step: Promise<T>): Promise<T> => Promise.race([step, watch.gone]);
      try {
        eventsConnection ??= queueConnection(config);
        events ??= quietOnErrors(new QueueEvents(QUEUES.import, { connection: eventsConnection, prefix }));
        await orLost(events.waitUntilReady());
        const job = await orLost(Job.fromId(queue, jobId));
        if (!job) throw (await watch.lostNow()) ?? jobLost(jobId, config.REDIS_URL, false);
        const state = await orLost(job.getState());
        if (state === 'completed' || state === 'failed') {
          // Read again: the job may have finished after the first read, whose copy lacks the result.
          const done = await orLost(Job.fromId(queue, jobId));
          if (state === 'completed') return done?.returnvalue as ImportJobResult;
          throw failedRun(jobId, done?.failedReason);
        }
        return (await orLost(job.waitUntilFinished(events, timeoutMs))) as ImportJobResult;
      } catch (err) {
        if (err instanceof ProductSyncError) throw err;
        // BullMQ's wait fails on its own when it finds the job's key missing ("Missing key for job").
        throw (await watch.lostNow()) ?? failedRun(jobId, (err as Error).message);
      } finally {
        watch.stop();
      }
    },
    async close() {
      if (events && eventsConnection) await closeQueueEvents(events, eventsConnection);
      eventsConnection?.disconnect();
      await eventsQueue.close();
      await queue.close();
      connection.disconnect();
    },
  };
}

// How long closing the events' reader may wait for its connection to end before it is dropped.
const EVENTS_CLOSE_MS = 2000;

/**
 * Closes a QueueEvents. BullMQ's close() disconnects its connection and waits for the connection's 'end', which
 * ioredis never emits for a connection disconnected while it waits to reconnect (after a Redis restart: its reconnect
 * timer is cleared, its status stays `reconnecting`). `enqueue --wait` then never printed why it stopped (its job lost
 * in the restart) and never exited. Such a connection is simply dropped (nothing of it is left running), and any other
 * close is bounded too.
 */
export async function closeQueueEvents(events: QueueEvents, conn: Redis): Promise<void> {
  const closing = events.close();
  closing.catch(() => undefined);
  if (conn.status !== 'ready') {
    conn.disconnect();
    return;
  }
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([closing, new Promise<void>((res) => (timer = setTimeout(res, EVENTS_CLOSE_MS)))]);
  clearTimeout(timer);
}

/**
 * The error of a failed import job: the code its reason carries (`… [PS_ERR_…]`, see workers.ts), else PS_ERR_QUEUE.
 */
function failedRun(jobId: string, reason: string | undefined): ProductSyncError {
  const m = /^(.*) \[(PS_ERR_[A-Z_]+)\]$/s.exec(reason ?? '');
  if (m && m[2]! in ERROR_CODES) return new ProductSyncError(m[2] as ErrorCode, m[1]);
  return new ProductSyncError('PS_ERR_QUEUE', `run ${jobId} failed: ${reason ?? 'unknown reason'}`);
}

/** The state of an import job as the console and `enqueue` show it. */
export interface RunStatus {
  id: string;
  state: string;
  origin: string;
  file: string;
  fileName?: string;
  /** A feed run's feed. */
  feed?: string;
  mapping: string;
  progress: unknown;
  createdAt: string;
  /** When a worker first took the job (BullMQ's processedOn), or null while it waits. */
  processedAt: string | null;
  finishedAt: string | null;
  failedReason: string | null;
  result: ImportJobResult | null;
}

/** The status of one import job, or null. */
export async function runStatus(queue: Queue, jobId: string): Promise<RunStatus | null> {
  let job = await Job.fromId(queue, jobId);
  if (!job) return null;
  const state = await job.getState();
  // The job may have ended between the two reads: the first copy lacks its result (a run shown done, exit code null).
  if ((state === 'completed' || state === 'failed') && !job.finishedOn) job = (await Job.fromId(queue, jobId)) ?? job;
  const data = job.data as ImportJobData;
  let progress: unknown = job.progress;
  if (state === 'waiting-children' && data.runId && typeof progress === 'object' && progress !== null) {
    // The parent sleeps while its chunks run: its push progress is the sum of the chunks finished so far.
    const finished = await (
      await queue.getBackend().client
    ).hgetall(runChunksKey(queue.opts.prefix ?? 'bull', data.runId));
    const done = Object.values(finished);
    const sum = (i: number) => done.reduce((n, v) => n + Number(v.split(':')[i] ?? 0), 0);
    progress = {
      ...progress,
      stage: 'push',
      operationsSent: sum(0),
      errors: sum(1),
      chunksDone: done.length,
      chunks: data.chunks ?? null,
      // Its place in line (run-line.ts): its next chunk running, in line behind `ahead` chunks, or held back.
      ...(await pushLine(queue, data.runId, data.chunks ?? 0, new Set(Object.keys(finished)))),
    };
  }
  if (state === 'waiting' || state === 'prioritized') {
    // Not started: the runs a worker takes before it.
    const line = await importLine(queue, jobId);
    if (line) progress = { ...(typeof progress === 'object' && progress ? progress : {}), stage: 'queued', ...line };
  }
  return {
    id: job.id!,
    state,
    origin: data.origin,
    file: data.request.file,
    ...(data.fileName ? { fileName: data.fileName } : {}),
    ...(data.feed ? { feed: data.feed } : {}),
    mapping: data.request.mapping,
    progress,
    createdAt: new Date(job.timestamp).toISOString(),
    processedAt: job.processedOn ? new Date(job.processedOn).toISOString() : null,
    finishedAt: job.finishedOn ? new Date(job.finishedOn).toISOString() : null,
    failedReason: job.failedReason ?? null,
    result: (job.returnvalue as ImportJobResult | null) ?? null,
  };
}
