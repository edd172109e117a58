import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import {
  DelayedError,
  MetricsTime,
  Queue,
  UnrecoverableError,
  WaitingChildrenError,
  Worker,
  type Job,
  type JobSchedulerJson,
} from 'bullmq';
import { contextFromConfig, type CommandContext } from '../runtime.ts';
import { DEFAULT_LIMITS } from '../formats/limits.ts';
import { parseAllowHosts } from '../sources/address-guard.ts';
import { sourceLabel } from '../sources/open.ts';
import type { Config } from '../config.ts';
import { isRetryable, LeaseLostError, ProductSyncError } from '../errors.ts';
import { logger } from '../logger.ts';
import { describeHolder, LeaseBusyError } from '../pipeline/run/lease.ts';
import { chunkApiFigures, type ChunkApiFigures } from '../pipeline/report/api-figures.ts';
import type { LimiterTally } from '../api/api-limiter.ts';
import { recoverChunk } from '../pipeline/run/chunks.ts';
import {
  finishRun,
  pushChunk,
  startQueuedRun,
  type ImportRequest,
  type RunContext,
  type RunProgress,
  type RunResult,
} from '../pipeline/run/run.ts';
import {
  checkHandlers,
  JOB_OPTIONS,
  jobPayload,
  pushJobId,
  QUEUES,
  runChunksKey,
  type ImportJobData,
} from './catalog.ts';
import { queueConnection, queuePrefix, quietOnErrors, warnOnEviction } from './connection.ts';
import { feedKeys } from './enqueue.ts';
import { eventRecorder, recordEventsOf } from './events-queue.ts';
import { eventsHandler, eventsWorkerSettings, recordingFailures, recordStalledFailures } from './events-worker.ts';
import { noteFeedRun, upsertDeadlines } from './feed-deadlines.ts';
import { finishFeedImport, runFeedTick, type FeedTickDeps } from './feed-tick.ts';
import { loadFeeds, type Feed } from './feeds.ts';
import { jobLockFence } from './job-lock.ts';
import { LeaseKeeper } from './lease-keeper.ts';
import type { ProcessMetrics } from './metrics.ts';
import { answersWithin } from './redis-health.ts';
import { isConnectionError, redisState } from './redis-state.ts';
import { RequestScopes } from './request-scope.ts';

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
  /** Counts each run this worker finishes (rows, issues, duration) and each feed source error (metrics.ts). */
  metrics?: ProcessMetrics;
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

/** What a push (chunk) job returns (kept in Redis, so counts only: the rows' outcomes are in the run directory). */
export interface PushJobResult {
  rows: number;
  failed: number;
  requests: number;
  /** What the chunk saw of the product API's limits (summary.json `api`, merged). */
  api?: ChunkApiFigures;
}

/**
 * Starts the import, push and feeds workers, and upserts one job scheduler per feed in `jobs/` (removing stale ones).
 */
export async function startWorkers(config: Config, options: WorkerOptions = {}): Promise<WorkerSet> {
  const feeds = await loadFeeds(options.jobsDir ?? 'jobs');
  const prefix = queuePrefix(config);
  const conn = queueConnection(config);
  await warnOnEviction(conn);
  const importQueue = quietOnErrors(new Queue(QUEUES.import, { connection: conn, prefix }));
  const pushQueue = quietOnErrors(new Queue(QUEUES.push, { connection: conn, prefix }));
  const feedsQueue = quietOnErrors(new Queue(QUEUES.feeds, { connection: conn, prefix }));
  // Run and feed events (src/events/): recorded in the events queue, delivered by the events worker below.
  const eventsQueue = quietOnErrors(new Queue(QUEUES.events, { connection: conn, prefix }));
  const recorder = await eventRecorder(config, eventsQueue);
  recordEventsOf(importQueue, Promise.resolve(recorder));
  // The product API's pace (and API_MAX_RPS) is the whole fleet's, shared through Redis by contextFromConfig
  // (src/queue/shared-rate.ts); a 429 holds back only the request that got it, for its Retry-After.
  const cc: CommandContext = await contextFromConfig(config, { redis: 'required' });
  const ctx = cc.ctx;
  const scopes = new RequestScopes(ctx.clients.stats);
  const reportDir = resolve(config.REPORT_DIR);
  const chunkSize = options.chunkSize ?? config.CHUNK_SIZE;
  // A worker killed with SIGKILL holds its job's lock until it expires: lockDuration bounds how long another worker
  // waits.
  const lockDuration = options.lockDurationMs ?? 30_000;
  // Queued runs' owner leases, kept alive between their jobs by every worker (lease-keeper.ts).
  const keeper = new LeaseKeeper(ctx.redis!, { prefix: config.QUEUE_PREFIX, stateDir: config.STATE_DIR }, importQueue);
  keeper.start((config.LEASE_TTL_SECONDS * 1000) / 3);
  // Aborted when the worker stops without Redis (abandon): the chunks in hand send nothing more.
  const stopSending = new AbortController();
  // What the jobs in hand send (a prepare step, a chunk), settled or not: what abandon waits for.
  const sending = new Set<Promise<void>>();
  const track = <T>(p: Promise<T>): Promise<T> => {
    const settled: Promise<void> = p
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => sending.delete(settled));
    sending.add(settled);
    return p;
  };

  const processImport = async (job: Job, token?: string) => {
    const data = jobPayload('import', job.data);
    if (data.step === 'prepare') {
      await recorder.runStarted(job);
      const req: ImportRequest = { ...data.request, mode: data.request.mode as ImportRequest['mode'], reportDir };
      // Its writes (brands created while resolving) are fenced by the job's lock as well as by the run's lease.
      const lock = await jobLockFence(job, token!, lockDuration);
      const lease: RunContext['lease'] = {
        queued: { jobId: job.id! },
        onGranted: (l, at) =>
          keeper.register({
            runId: l.holder.runId,
            owner: at.owner,
            api: at.api,
            grant: l.grant,
            holder: l.holder,
            ttlMs: l.ttlMs,
            importJobId: job.id!,
          }),
      };
      // Each chunk job is added as soon as the second pass has written its chunk: pushing starts while the pass goes
      // on.
      const { value: run } = await track(
        scopes.run((stats) =>
          startQueuedRun(
            req,
            {
              ...ctx,
              clients: { ...ctx.clients, stats },
              chunkSize,
              onProgress: progressOf(job),
              lease,
              fences: [lock],
            },
            (c) =>
              pushQueue
                .add(
                  c.kind,
                  { runId: c.runId, workDir: c.workDir, kind: c.kind, index: c.index },
                  {
                    ...JOB_OPTIONS.push,
                    jobId: pushJobId(c),
                    parent: { id: job.id!, queue: job.queueQualifiedName },
                    ignoreDependencyOnFailure: true,
                  },
                )
                .then(() => undefined),
          ),
        ),
      ).finally(() => lock.stop());
      // The push stage's counts are summed from the chunks as they finish (runStatus); this is where they start.
      await job.updateProgress({
        stage: 'push',
        rowsRead: run.rows,
        operationsSent: 0,
        errors: 0,
        rowsTotal: run.rows,
      });
      await job.updateData({
        ...data,
        step: 'wait',
        runId: run.runId,
        workDir: run.workDir,
        chunks: run.rowChunks + run.archiveChunks,
      });
      logger
        .child({ jobId: job.id, queue: QUEUES.import })
        .info({ runId: run.runId, chunks: run.rowChunks + run.archiveChunks }, 'import prepared');
    }
    if (await job.moveToWaitingChildren(token!)) throw new WaitingChildrenError();
    // Read again: the prepare step above has just stored the run's id and directory in the job's data.
    const { workDir, runId } = jobPayload('import', job.data);
    const values = Object.values(await job.getChildrenValues<PushJobResult>());
    for (const [key, reason] of Object.entries(await job.getIgnoredChildrenFailures())) {
      const m = /-(rows|archives)-(\d+)$/.exec(key);
      // A chunk out of retries: what its journal confirmed keeps its outcome, the rest is `failed`.
      if (m) await recoverChunk(workDir!, m[1] as 'rows' | 'archives', Number(m[2]), String(reason));
    }
    const result = await finishRun(workDir!, {
      ...ctx,
      pushRequests: values.reduce((n, v) => n + (v?.requests ?? 0), 0),
      pushApi: values.map((v) => v?.api),
    });
    // Recorded before the job returns and before the feed's hash is written: a worker killed in between redoes this
    // step, and records the same events again (a no-op).
    await recorder.runEnded(job, result);
    if (data.origin === 'feed' && data.feed)
      await noteFeedRun(conn, prefix, data.feed, { ...result, jobId: job.id! }, recorder);
    // The report is written: the next run of this owner may start (also a run that ended at its prepare step, with no
    // chunk to push: an archive guard that tripped, an empty sheet).
    if (runId) await keeper.finish(runId);
    await recordFeedImport(job.id!, data, result);
    options.metrics?.recordRun(result.summary, data.origin === 'feed' ? data.feed : undefined);
    await job.updateProgress({
      stage: 'done',
      rowsRead: result.summary.counts.rows,
      operationsSent: result.summary.counts.rows,
      errors: result.summary.counts.failed + result.summary.counts.invalid,
    });
    return {
      runId: result.runId,
      exitCode: result.exitCode,
      summary: result.summary,
      reportDir: result.reportDir,
      files: result.files,
    };
  };

  const progressOf = (job: Job) => {
    let last = 0;
    return (p: RunProgress) => {
      const now = Date.now();
      if (now - last < 1000) return;
      last = now;
      job
        .updateProgress({
          stage: p.stage,
          rowsRead: p.rowsRead,
          rowsTotal: p.rowsTotal,
          operationsSent: 0,
          errors: p.errors,
        })
        .catch(() => undefined);
    };
  };

  const recordFeedImport = async (jobId: string, data: ImportJobData, result: RunResult) => {
    if (data.origin !== 'feed' || !data.feed || !data.sha256) return;
    const keys = feedKeys(prefix, data.feed);
    // An aborted run (API unavailable, credential rejected, archive guard) is not an import: the next tick tries again.
    if (result.exitCode !== 3) await conn.sadd(keys.imported, data.sha256);
    // `lastSuccessAt` is noteFeedRun's (feed-deadlines.ts), written with the run's events.
    await conn.hset(keys.last, {
      finishedAt: new Date().toISOString(),
      runId: result.runId,
      exitCode: String(result.exitCode),
      file: data.request.file,
    });
    // The feed's ledger: the file is done, its copy removed; the next file of the feed goes (feed-tick.ts).
    if (
      await finishFeedImport(
        feeds.find((f) => f.id === data.feed),
        jobId,
        { runId: result.runId, exitCode: result.exitCode },
        tickDeps,
      )
    )
      await tickDeps.requeue(data.feed);
  };

  const processPush = async (job: Job, token?: string) => {
    const d = jobPayload('push', job.data);
    const lock = await jobLockFence(job, token!, lockDuration);
    try {
      const t0 = performance.now();
      const limiter = ctx.limiter;
      const push = () => scopes.run(() => pushChunk(d, { ...ctx, signal: stopSending.signal }, lock));
      const {
        value: { value: out, requests },
        tally,
      } = await track(
        limiter
          ? limiter.tally(push)
          : push().then((value) => ({ value, tally: undefined as LimiterTally | undefined })),
      );
      await job.updateProgress({ stage: 'push', operations: out.rows, done: out.rows, failed: out.failed });
      // One field per chunk, so a chunk run twice (retry, takeover) is counted once.
      const key = runChunksKey(prefix, d.runId);
      await conn
        .multi()
        .hset(key, `${d.kind}-${d.index}`, `${out.rows}:${out.failed}`)
        .expire(key, 30 * 24 * 3600)
        .exec();
      // Rows stay in the run directory: the job's return value (kept in Redis) is only counts.
      const result: PushJobResult = {
        rows: out.rows,
        failed: out.failed,
        requests: requests.product,
        ...(limiter && tally ? { api: chunkApiFigures(tally, limiter.snapshot(), performance.now() - t0) } : {}),
      };
      return result;
    } catch (err) {
      // This worker lost the job to another one (paused past its lock): whatever it throws, BullMQ ignores it.
      if (lock.lost) throw lock.lost;
      // Stopped by the worker's stop: the chunk is pushed again, from its journal, by whichever worker takes it.
      if (stopSending.signal.aborted) throw err;
      // A chunk that cannot succeed by retrying (credential rejected, state missing) fails at once.
      if (!isRetryable(err)) throw new UnrecoverableError((err as Error).message);
      throw err;
    } finally {
      lock.stop();
    }
  };

  // A feed tick lists the feed's source and queues its oldest new file (feed-tick.ts).
  const stopTicks = new AbortController();
  const tickDeps: FeedTickDeps = {
    redis: conn,
    prefix,
    importQueue,
    copyRoot: resolve(config.UPLOAD_DIR, 'feeds'),
    allowHosts: parseAllowHosts(config.SOURCE_ALLOW_HOSTS),
    maxBytes: DEFAULT_LIMITS.fileBytes,
    requeue: async (feed, later) => {
      await feedsQueue.add(
        'feed-tick',
        { feed, followUp: true },
        later
          ? {
              ...JOB_OPTIONS.feeds,
              delay: later.delayMs,
              jobId: `later-${feed}-${createHash('sha256').update(later.key).digest('hex').slice(0, 16)}`,
            }
          : JOB_OPTIONS.feeds,
      );
    },
    // The worker stopping cuts the ticks in hand (their listings and downloads): a close waits for nothing slow.
    signal: stopTicks.signal,
  };
  const processFeed = async (job: Job) => {
    const { feed: id } = jobPayload('feeds', job.data);
    const feed = feeds.find((f) => f.id === id);
    if (!feed) return { skipped: `feed ${id} is no longer defined` };
    const result = await runFeedTick(feed, tickDeps);
    if (result.stopped) return result;
    // Events: a source that failed is a run that could not start (run.failed); a tick of the schedule (or `feeds run`)
    // that found nothing to queue says so (feed.no_new_file), a follow-up tick after an import does not.
    if (result.error) {
      await recorder.sourceFailed(id, job, sourceLabel(feed.source), feed.mapping, result.error);
      options.metrics?.recordSourceError(id);
    } else if (result.enqueued === null && !job.data.followUp && !/^(import |another tick)/.test(result.skipped ?? ''))
      await recorder.noNewFile(id, job, result.skipped ?? 'nothing new', result.file ?? null);
    await job.updateProgress(100);
    return result;
  };

  const handlers = {
    import: async (job: Job, token?: string) => {
      try {
        return await processImport(job, token);
      } catch (err) {
        // Another run holds this owner's lease: this import waits its turn (a delay, not a failed attempt), as long as
        // its --wait-lock allows (no limit by default); its progress says whom it waits for (the console shows it).
        if (err instanceof LeaseBusyError) {
          const data = jobPayload('import', job.data);
          const since = data.leaseWaitSince ?? Date.now();
          if (data.waitLockSeconds === undefined || Date.now() - since < data.waitLockSeconds * 1000) {
            if (data.leaseWaitSince === undefined) await job.updateData({ ...data, leaseWaitSince: since });
            await job.updateProgress({
              stage: 'waiting',
              waitingFor: describeHolder(err.holder),
              since: new Date(since).toISOString(),
            });
            logger.info(
              { jobId: job.id, holder: describeHolder(err.holder) },
              'import waits for the lease of its owner',
            );
            await job.moveToDelayed(Date.now() + 1000 + Math.floor(Math.random() * 1000), token);
            throw new DelayedError();
          }
        }
        // This worker lost the job to another one (paused past its lock): what it throws is ignored by BullMQ.
        if (err instanceof LeaseLostError && /^lease lost: the lock of job/.test(err.message)) throw err;
        // Waiting for the children is not a failure; a failure no retry can fix (bad mapping, unreadable file) is
        // final.
        if (
          err instanceof WaitingChildrenError ||
          err instanceof DelayedError ||
          err instanceof UnrecoverableError ||
          isRetryable(err)
        )
          throw err;
        // Failed for good: its owner lease is freed now rather than when the keeper notices.
        const runId = (job.data as ImportJobData).runId;
        if (runId) await keeper.finish(runId).catch(() => undefined);
        // The code rides along in the reason, so `enqueue --wait` exits as the inline import would (failedCode).
        throw new UnrecoverableError(
          err instanceof ProductSyncError ? `${err.message} [${err.code}]` : (err as Error).message,
        );
      }
    },
    push: processPush,
    feeds: processFeed,
    events: eventsHandler(config, recorder, feeds, conn, prefix),
  };
  // The worker does not start with a queue of the catalog it cannot handle (or a handler the catalog does not know).
  checkHandlers(handlers);

  const workerConns = [
    queueConnection(config),
    queueConnection(config),
    queueConnection(config),
    queueConnection(config),
  ] as const;
  const workerOpts = {
    connection: workerConns[0],
    prefix,
    lockDuration,
    stalledInterval: Math.max(1000, Math.floor(lockDuration / 2)),
    maxStalledCount: 3,
    // BullMQ's completed / failed counts per queue (bullmq_job_completed_total… on /metrics). It keeps a data point a
    // minute besides, and every scrape reads them all: an hour's worth.
    metrics: { maxDataPoints: MetricsTime.ONE_HOUR },
  };
  const importWorker = new Worker(QUEUES.import, recordingFailures(recorder, handlers.import), {
    ...workerOpts,
    concurrency: options.importConcurrency ?? 1,
  });
  const pushWorker = new Worker(QUEUES.push, handlers.push, {
    ...workerOpts,
    connection: workerConns[1],
    concurrency: options.pushConcurrency ?? 2,
    // BullMQ only honours queue.rateLimit() on a worker that has a limiter; this one never binds on its own
    // (API_MAX_RPS is enforced per request by the shared rate above, not per chunk job).
    limiter: { max: 1000, duration: 1000 },
  });
  const feedsWorker = new Worker(QUEUES.feeds, handlers.feeds, {
    ...workerOpts,
    connection: workerConns[2],
    // A tick per feed at once: a slow source holds its own feed's tick (until its deadline), never another feed's.
    concurrency: Math.max(1, feeds.length),
  });
  const eventsWorker = new Worker(QUEUES.events, handlers.events, {
    ...workerOpts,
    connection: workerConns[3],
    ...eventsWorkerSettings(config),
  });
  const workers = [importWorker, pushWorker, feedsWorker, eventsWorker];
  recordStalledFailures(importWorker, recorder);
  for (const w of workers) {
    w.on('failed', (job, err) => logger.warn({ queue: w.name, jobId: job?.id, err: err.message }, 'job failed'));
    // A lost connection fails every reconnection attempt of BullMQ's own connections: the process's Redis state
    // tells the outage once (redis-state.ts).
    w.on('error', (err) => {
      if (!redisState.down && !isConnectionError(err))
        logger.error({ queue: w.name, err: err.message }, 'worker error');
    });
  }

  // One scheduler per feed, upserted by every worker at start (BullMQ keeps one tick per schedule however many run) and
  // again whenever Redis comes back: a Redis restarted without its data has none left. Returns how many were missing.
  const upsertSchedules = async (): Promise<number> => {
    const before = await feedsQueue.getJobSchedulers();
    const idOf = (s: JobSchedulerJson) => (s as { id?: string }).id ?? s.key;
    for (const f of feeds) {
      await feedsQueue.upsertJobScheduler(
        f.id,
        { pattern: f.schedule, tz: f.timezone },
        { name: 'feed-tick', data: { feed: f.id }, opts: JOB_OPTIONS.feeds },
      );
    }
    for (const s of before) if (!feeds.some((f) => f.id === idOf(s))) await feedsQueue.removeJobScheduler(idOf(s));
    await upsertDeadlines(eventsQueue, conn, prefix, feeds);
    return feeds.filter((f) => !before.some((s) => idOf(s) === f.id)).length;
  };
  await upsertSchedules();
  const stopWatching = redisState.onChange((down) => {
    if (down || feeds.length === 0) return;
    upsertSchedules().then(
      (missing) =>
        missing > 0 &&
        logger.warn(
          { feeds: feeds.map((f) => f.id) },
          `Redis came back without ${missing} feed schedule(s) (restarted without its data?): re-created from ${options.jobsDir ?? 'jobs'}/`,
        ),
      (err: unknown) =>
        logger.warn(
          { err: (err as Error).message },
          'cannot re-create the feed schedules after Redis came back: restart the worker',
        ),
    );
  });
  logger.info({ feeds: feeds.map((f) => f.id), prefix }, 'workers started');

  // Locks are renewed by timers: a stretch of synchronous work longer than the lock loses the job to another worker
  // (stalled), which then runs it a second time. Say so when the event loop comes close.
  const loop = monitorEventLoopDelay({ resolution: 20 });
  loop.enable();
  const loopCheck = setInterval(() => {
    const maxMs = loop.max / 1e6;
    loop.reset();
    if (maxMs > lockDuration / 3)
      logger.warn(
        { blockedMs: Math.round(maxMs), lockDurationMs: lockDuration },
        'the event loop was blocked for a third of the job lock or more: raise WORKER_LOCK_MS if this repeats',
      );
  }, 5000);
  loopCheck.unref();

  let closing: Promise<void> | undefined;
  let abandoning: Promise<void> | undefined;
  const stopTimers = () => {
    clearInterval(loopCheck);
    loop.disable();
    stopWatching();
  };
  return {
    workers,
    feeds,
    close() {
      closing ??= (async () => {
        stopTimers();
        stopTicks.abort(new ProductSyncError('PS_ERR_RUN_INTERRUPTED', 'the worker stopped'));
        await Promise.all(workers.map((w) => w.close()));
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
        const settled = Promise.all([...sending]);
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

/** True when `p` settled within `ms` (its outcome is not looked at). */
function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.then(
      () => true,
      () => true,
    ),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms))),
  ]).finally(() => clearTimeout(timer));
}

/** For `feeds list`: whether a `dir` feed's drop folder exists (a feed pointing nowhere is worth a warning). */
export function feedSourceExists(feed: Feed): boolean {
  return 'dir' in feed.source ? existsSync(resolve(feed.source.dir)) : true;
}
