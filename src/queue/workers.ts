/**
 * The worker process's wiring: its queues, the shared context of the job handlers (job-context.ts), one handler per
 * queue — the import job (import-job.ts), a push job (push-job.ts), a feed tick (feed-tick-job.ts), an event's delivery
 * (events-worker.ts) — the BullMQ workers that run them, the feeds' schedules (feed-schedules.ts), and how it stops.
 */
import { resolve } from 'node:path';
import { MetricsTime, Queue, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { contextFromConfig, type CommandContext } from '../runtime.ts';
import { realClock, type Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { ProductSyncError } from '../errors.ts';
import { logger } from '../logger.ts';
import type { ProcessMetrics } from '../metrics/metrics.ts';
import { isConnectionError, redisState } from '../redis-state.ts';
import { checkHandlers, QUEUES } from './catalog.ts';
import { queueConnection, queuePrefix, quietOnErrors, warnOnEviction } from './connection.ts';
import { watchEventLoop } from './event-loop-watch.ts';
import { eventRecorder, recordEventsOf, type EventRecorder } from './events-queue.ts';
import { chunkFailed } from './chunk-lineage.ts';
import { eventsHandler, eventsWorkerSettings, recordingFailures, recordStalledFailures } from './events-worker.ts';
import { keepFeedSchedules } from './feed-schedules.ts';
import { feedTickDeps, feedTickHandler, recordFeedImport } from './feed-tick-job.ts';
import { loadFeeds, type Feed } from './feeds.ts';
import { importJobHandler } from './import-job.ts';
import { sendingTracker, type JobContext } from './job-context.ts';
import { LeaseKeeper } from '../lease/lease-keeper.ts';
import { OwnerSlots } from './owner-slots.ts';
import { pushJobHandler } from './push-job.ts';
import { answersWithin } from './redis-health.ts';
import { within } from '../within.ts';
import { closeWorker } from './worker-close.ts';
import { queueTelemetry } from '../tracing.ts';

/** Settings of the worker process. */
export interface WorkerOptions {
  /** Import (parent) jobs processed at once. */
  importConcurrency?: number;
  /** Chunk jobs processed at once (each sends up to API_CONCURRENCY requests). */
  pushConcurrency?: number;
  jobsDir?: string;
  /** Row plans per chunk job. */
  chunkSize?: number;
  /** Job lock duration, ms (default 30 s; a killed worker's jobs are taken over after it). */
  lockDurationMs?: number;
  /** How often the stalled-job check runs (default: half the lock): a job moves once its lock is gone. */
  stalledCheckMs?: number;
  /** Counts each run this worker finishes (rows, issues, duration) and each feed source error (metrics.ts). */
  metrics?: ProcessMetrics;
  /** What the jobs' waits and delays are timed by (the real clocks by default). */
  clock?: Clock;
}

/** The running workers, and how to stop them. */
export interface WorkerSet {
  workers: Worker[];
  feeds: Feed[];
  /** Stops taking jobs, finishes the jobs in hand (BullMQ records their outcome), closes. Needs Redis. */
  close(): Promise<void>;
  /**
   * Stops without Redis: the chunks in hand send nothing more, their requests in flight settle (cut after
   * `settleMs`) and are journalled; the workers close without waiting for Redis to record anything — their jobs go
   * back to the queue when their locks expire, and resume from their journals. Bounded in time.
   */
  abandon(settleMs?: number): Promise<void>;
  /** True when this set's Redis connection answers PING within `ms`. */
  redisAnswers(ms: number): Promise<boolean>;
}

/**
 * Starts the import, push and feeds workers, and upserts one job scheduler per feed in `jobs/` (removing stale ones).
 */
export async function startWorkers(config: Config, options: WorkerOptions = {}): Promise<WorkerSet> {
  const jobsDir = options.jobsDir ?? 'jobs';
  const feeds = await loadFeeds(jobsDir);
  const prefix = queuePrefix(config);
  const conn = queueConnection(config);
  await warnOnEviction(conn);
  const importQueue = quietOnErrors(new Queue(QUEUES.import, { connection: conn, prefix, ...queueTelemetry() }));
  const pushQueue = quietOnErrors(new Queue(QUEUES.push, { connection: conn, prefix, ...queueTelemetry() }));
  const feedsQueue = quietOnErrors(new Queue(QUEUES.feeds, { connection: conn, prefix, ...queueTelemetry() }));
  // Run and feed events (src/events/): recorded in the events queue, delivered by the events worker below.
  const eventsQueue = quietOnErrors(new Queue(QUEUES.events, { connection: conn, prefix, ...queueTelemetry() }));
  const recorder = await eventRecorder(config, eventsQueue);
  recordEventsOf(importQueue, Promise.resolve(recorder));
  // The product API's pace (and API_MAX_RPS) is the whole fleet's, shared through Redis by contextFromConfig
  // (src/api/shared-rate.ts); a 429 holds back only the request that got it, for its Retry-After.
  const cc: CommandContext = await contextFromConfig(config, { redis: 'required' });
  const ctx = cc.ctx;
  // A worker killed with SIGKILL holds its job's lock until it expires: lockDuration bounds how long another worker
  // waits.
  const lockDuration = options.lockDurationMs ?? 30_000;
  // Queued runs' owner leases, kept alive between their jobs by every worker (lease-keeper.ts).
  const clock = options.clock ?? realClock;
  const keeper = new LeaseKeeper(
    ctx.redis!,
    { prefix: config.QUEUE_PREFIX, stateDir: config.STATE_DIR, clock },
    importQueue,
  );
  keeper.start((config.LEASE_TTL_SECONDS * 1000) / 3);
  // Aborted when the worker stops without Redis (abandon): the chunks in hand send nothing more.
  const stopSending = new AbortController();
  // What the jobs in hand send (a prepare step, a chunk), settled or not: what abandon waits for.
  const sending = sendingTracker();
  const jobs: JobContext = {
    ctx,
    conn,
    prefix,
    recorder,
    keeper,
    lockDuration,
    clock,
    metrics: options.metrics,
    track: sending.track,
    // Chunks in progress per owner across the fleet, capped by OWNER_MAX_CHUNKS (docs/queue.md, "Fairness").
    ownerSlots: new OwnerSlots(conn, { prefix, cap: config.OWNER_MAX_CHUNKS, ttlMs: lockDuration }),
  };
  // A feed tick lists the feed's source and queues its oldest new file (feed-tick.ts).
  const stopTicks = new AbortController();
  const tickDeps = feedTickDeps(config, jobs, { importQueue, feedsQueue }, stopTicks.signal);

  const handlers = {
    import: importJobHandler({
      ...jobs,
      pushQueue,
      reportDir: resolve(config.REPORT_DIR),
      chunkSize: options.chunkSize ?? config.CHUNK_SIZE,
      feedImportDone: (jobId, data, result) => recordFeedImport(jobs, feeds, tickDeps, jobId, data, result),
    }),
    push: pushJobHandler(jobs, stopSending.signal),
    feeds: feedTickHandler(jobs, feeds, tickDeps),
    events: eventsHandler(config, recorder, feeds, conn, prefix),
  };
  // The worker does not start with a queue of the catalog it cannot handle (or a handler the catalog does not know).
  checkHandlers(handlers);
  const { workers, workerConns } = startQueueWorkers(config, handlers, recorder, {
    prefix,
    lockDuration,
    stalledInterval: options.stalledCheckMs ?? Math.max(1000, Math.floor(lockDuration / 2)),
    importConcurrency: options.importConcurrency ?? 1,
    pushConcurrency: options.pushConcurrency ?? 2,
    feeds: feeds.length,
  });

  const stopWatching = await keepFeedSchedules({ feedsQueue, eventsQueue }, conn, prefix, feeds, jobsDir);
  logger.info({ feeds: feeds.map((f) => f.id), prefix }, 'workers started');
  const stopLoopWatch = watchEventLoop(lockDuration);

  let closing: Promise<void> | undefined;
  let abandoning: Promise<void> | undefined;
  const stopTimers = () => {
    stopLoopWatch();
    stopWatching();
  };
  return {
    workers,
    feeds,
    close() {
      closing ??= (async () => {
        stopTimers();
        stopTicks.abort(new ProductSyncError('PS_ERR_RUN_INTERRUPTED', 'the worker stopped'));
        // BullMQ's close, which also ends when a blocking connection waited to reconnect (Redis just back).
        await Promise.all(workers.map((w) => closeWorker(w)));
        await keeper.stop();
        await Promise.all([importQueue.close(), pushQueue.close(), feedsQueue.close(), eventsQueue.close()]);
        await cc.close();
        // BullMQ closes the connections it made, not the ones it was given.
        for (const c of [...workerConns, conn]) c.disconnect();
      })();
      return closing;
    },
    abandon(settleMs = 4000) {
      abandoning ??= (async () => {
        stopTimers();
        stopTicks.abort(new ProductSyncError('PS_ERR_RUN_INTERRUPTED', 'the worker stopped'));
        stopSending.abort(new ProductSyncError('PS_ERR_RUN_INTERRUPTED', 'the worker stopped'));
        const settled = sending.settled();
        // Requests still in flight then are cut: the journal says they were sent, a resume looks their rows up.
        if (!(await within(settled, settleMs))) {
          await ctx.clients.close();
          await within(settled, 1000);
        }
        // Force: BullMQ does not wait for the jobs in hand, whose outcome it cannot record without Redis. A close
        // already begun (Redis lost during it) never ends: it is left behind.
        await within(Promise.all(workers.map((w) => w.close(true))), 1000);
        void keeper.stop();
        await within(cc.close(), 1000);
        for (const c of [...workerConns, conn]) c.disconnect();
      })();
      return abandoning;
    },
    redisAnswers: (ms) => answersWithin(conn, ms),
  };
}

type Handler = (job: Job, token?: string) => Promise<unknown>;
type Handlers = Record<'import' | 'push' | 'feeds' | 'events', Handler>;

/** One BullMQ worker per queue, each on its own connection, logging failures and errors (an outage once). */
function startQueueWorkers(
  config: Config,
  handlers: Handlers,
  recorder: EventRecorder,
  o: {
    prefix: string;
    lockDuration: number;
    stalledInterval: number;
    importConcurrency: number;
    pushConcurrency: number;
    feeds: number;
  },
): { workers: Worker[]; workerConns: readonly Redis[] } {
  const workerConns = [
    queueConnection(config),
    queueConnection(config),
    queueConnection(config),
    queueConnection(config),
  ] as const;
  const workerOpts = {
    connection: workerConns[0],
    prefix: o.prefix,
    lockDuration: o.lockDuration,
    stalledInterval: o.stalledInterval,
    maxStalledCount: 3,
    // BullMQ's completed / failed counts per queue (bullmq_job_completed_total… on /metrics). It keeps a data point a
    // minute besides, and every scrape reads them all: an hour's worth.
    metrics: { maxDataPoints: MetricsTime.ONE_HOUR },
    // Tracing on: BullMQ's spans, each job's processing in the trace of whoever added it (bullmq-otel).
    ...queueTelemetry(),
  };
  const importWorker = new Worker(QUEUES.import, recordingFailures(recorder, handlers.import), {
    ...workerOpts,
    concurrency: o.importConcurrency,
  });
  const pushWorker = new Worker(QUEUES.push, recordingFailures(recorder, handlers.push, chunkFailed), {
    ...workerOpts,
    connection: workerConns[1],
    concurrency: o.pushConcurrency,
    // BullMQ only honours queue.rateLimit() on a worker that has a limiter; this one never binds on its own
    // (API_MAX_RPS is enforced per request by the shared rate above, not per chunk job).
    limiter: { max: 1000, duration: 1000 },
  });
  const feedsWorker = new Worker(QUEUES.feeds, handlers.feeds, {
    ...workerOpts,
    connection: workerConns[2],
    // A tick per feed at once: a slow source holds its own feed's tick (until its deadline), never another feed's.
    concurrency: Math.max(1, o.feeds),
  });
  const eventsWorker = new Worker(QUEUES.events, handlers.events, {
    ...workerOpts,
    connection: workerConns[3],
    ...eventsWorkerSettings(config),
  });
  const workers = [importWorker, pushWorker, feedsWorker, eventsWorker];
  recordStalledFailures(importWorker, recorder);
  recordStalledFailures(pushWorker, recorder, chunkFailed);
  for (const w of workers) {
    w.on('failed', (job, err) => logger.warn({ queue: w.name, jobId: job?.id, err: err.message }, 'job failed'));
    // A lost connection fails every reconnection attempt of BullMQ's own connections: the process's Redis state
    // tells the outage once (redis-state.ts).
    w.on('error', (err) => {
      if (!redisState.down && !isConnectionError(err))
        logger.error({ queue: w.name, err: err.message }, 'worker error');
    });
  }
  return { workers, workerConns };
}
