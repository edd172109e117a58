import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Queue, UnrecoverableError, WaitingChildrenError, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { contextFromConfig, type CommandContext } from '../runtime.ts';
import type { Config } from '../config.ts';
import { isRetryable, ProductSyncError } from '../errors.ts';
import { logger } from '../logger.ts';
import type { ExecutedRow } from '../pipeline/sync/execute.ts';
import { openJournal } from '../pipeline/sync/journal.ts';
import type { ArchiveEntry, RowPlan } from '../pipeline/sync/plan.ts';
import { executeArchives, executeChunk, finalizeRun, prepareRun, type ImportRequest } from '../pipeline/run.ts';
import { checkHandlers, JOB_OPTIONS, jobPayload, pushJobId, QUEUES, runChunksKey, type ImportJobData } from './catalog.ts';
import { queueConnection, queuePrefix, quietOnErrors, warnOnEviction } from './connection.ts';
import { enqueueImport, feedKeys } from './enqueue.ts';
import { loadFeeds, pickFeedFile, type Feed } from './feeds.ts';
import { RequestScopes } from './request-scope.ts';
import { SharedRate, SharedThrottle } from './shared-rate.ts';

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
}

/** The running workers, and how to stop them (finishing the jobs in hand). */
export interface WorkerSet {
  workers: Worker[];
  feeds: Feed[];
  close(): Promise<void>;
}

/** What a push (chunk) job returns: its rows' outcomes and the product requests it sent. */
export interface PushJobResult {
  rows: ExecutedRow[];
  requests: number;
}

const chunkFile = (workDir: string, kind: 'rows' | 'archives', i: number) => join(workDir, 'chunks', `${kind}-${i}.json`);

/** Rows of a chunk whose job failed for good: what the chunk's journal confirmed keeps its outcome, the rest is `failed`. */
async function rowsOfFailedChunk(workDir: string, kind: 'rows' | 'archives', index: number, reason: string): Promise<ExecutedRow[]> {
  const journal = await openJournal(join(workDir, `journal-${kind}-${index}.jsonl`));
  try {
    const issue = (row: number | null) => ({ row, column: null, field: null, value: null, code: 'API_FAILED', severity: 'error' as const, message: `chunk failed after its retries: ${reason}` });
    if (kind === 'archives') {
      const entries = JSON.parse(await readFile(chunkFile(workDir, kind, index), 'utf8')) as ArchiveEntry[];
      return entries.map((e) => ({ row: null, key: e.key, outcome: 'failed', tradeItemId: e.tradeItemId, manufacturedItemId: null, changedFields: [], issues: [issue(null)] }));
    }
    const plans = JSON.parse(await readFile(chunkFile(workDir, kind, index), 'utf8')) as RowPlan[];
    return plans.map((p) => {
      const done = journal.state(`row:${p.row}`);
      if (done?.state === 'confirmed') return done.result as ExecutedRow;
      return { row: p.row, key: p.key, outcome: 'failed', tradeItemId: p.tradeItemId, manufacturedItemId: p.manufacturedItemId, changedFields: [], issues: [...p.issues, issue(p.row)] };
    });
  } finally {
    await journal.close();
  }
}

/** Starts the import, push and feeds workers, and upserts one job scheduler per feed in `jobs/` (removing stale ones). */
export async function startWorkers(config: Config, options: WorkerOptions = {}): Promise<WorkerSet> {
  const feeds = await loadFeeds(options.jobsDir ?? 'jobs');
  const prefix = queuePrefix(config);
  const conn = queueConnection(config);
  await warnOnEviction(conn);
  const importQueue = quietOnErrors(new Queue(QUEUES.import, { connection: conn, prefix }));
  const pushQueue = quietOnErrors(new Queue(QUEUES.push, { connection: conn, prefix }));
  const feedsQueue = quietOnErrors(new Queue(QUEUES.feeds, { connection: conn, prefix }));
  // API_MAX_RPS is a budget of the whole fleet, not of each process: starts are reserved on one Redis key, which also
  // carries the pause of a 429 to every worker.
  const rateConn = new Redis(config.REDIS_URL, { maxRetriesPerRequest: 1 });
  rateConn.on('error', () => undefined);
  const sharedRate = new SharedRate(rateConn, `${prefix}:api-rate`, config.API_MAX_RPS);
  const cc: CommandContext = await contextFromConfig(config, {
    useRedis: true,
    // A 429 pauses every worker, not only this process (DESIGN §8): no worker takes a new chunk until Retry-After has
    // passed (BullMQ rate limit), and no request of a chunk already in hand starts before then either (shared rate).
    onRateLimited: (ms) => {
      void pushQueue.rateLimit(ms ?? 1000).catch(() => undefined);
      void sharedRate.pause(ms ?? 1000);
    },
  });
  const ctx = { ...cc.ctx, throttle: new SharedThrottle(cc.ctx.throttle!, sharedRate) };
  const scopes = new RequestScopes(ctx.clients.stats);
  const reportDir = resolve(config.REPORT_DIR);
  const chunkSize = options.chunkSize ?? 250;

  const processImport = async (job: Job, token?: string) => {
    const data = jobPayload('import', job.data);
    const log = logger.child({ jobId: job.id, queue: QUEUES.import });
    let step = data.step;
    let runId = data.runId;
    let workDir = data.workDir;
    let aborted: { exitCode: 2 | 3; message: string } | undefined;
    if (step === 'prepare') {
      const req: ImportRequest = { ...data.request, mode: data.request.mode as ImportRequest['mode'], reportDir };
      let lastProgress = 0;
      let rowsRead = 0;
      const { value: prepared } = await scopes.run((stats) => prepareRun(req, {
        ...ctx,
        clients: { ...ctx.clients, stats },
        chunkSize,
        onProgress: (p) => {
          rowsRead = p.rowsRead;
          const now = Date.now();
          if (now - lastProgress < 1000) return;
          lastProgress = now;
          job.updateProgress({ stage: p.stage, rowsRead: p.rowsRead, operationsSent: 0, errors: p.errors }).catch(() => undefined);
        },
      }));
      runId = prepared.runId;
      workDir = prepared.workDir;
      aborted = prepared.aborted;
      await mkdir(join(workDir, 'chunks'), { recursive: true });
      const children: { name: string; data: unknown; opts: object }[] = [];
      for (const [kind, list] of [['rows', prepared.chunks], ['archives', prepared.archives]] as const) {
        for (const [i, chunk] of list.entries()) {
          await writeFile(chunkFile(workDir, kind, i), JSON.stringify(chunk));
          children.push({
            name: kind,
            data: { runId, workDir, kind, index: i },
            // Deterministic ids: a parent that restarts its prepare step after a crash adds nothing twice.
            opts: { ...JOB_OPTIONS.push, jobId: pushJobId({ runId: runId!, kind, index: i }), parent: { id: job.id!, queue: job.queueQualifiedName }, ignoreDependencyOnFailure: true },
          });
        }
      }
      if (children.length > 0) await pushQueue.addBulk(children as never);
      log.info({ runId, chunks: children.length }, 'import prepared');
      const rowsTotal = prepared.chunks.reduce((n, c) => n + c.length, 0) + prepared.archives.reduce((n, c) => n + c.length, 0);
      // The push stage's counts are summed from the chunks as they finish (runStatus); this is where they start.
      await job.updateProgress({ stage: 'push', rowsRead, operationsSent: 0, errors: 0, rowsTotal });
      await job.updateData({ ...data, step: 'wait', runId, workDir, chunks: children.length, ...(aborted ? { aborted } : {}) });
      step = 'wait';
    }
    if (step === 'wait') {
      if (await job.moveToWaitingChildren(token!)) throw new WaitingChildrenError();
    }
    aborted ??= (job.data as { aborted?: { exitCode: 2 | 3; message: string } }).aborted;
    const values = Object.values(await job.getChildrenValues<PushJobResult | ExecutedRow[]>());
    // A chunk returns its rows and the product requests it made (bare rows: a chunk finished by an older worker).
    const results: ExecutedRow[] = values.flatMap((v) => (Array.isArray(v) ? v : v.rows));
    const pushRequests = values.reduce((n, v) => n + (Array.isArray(v) ? 0 : v.requests), 0);
    const failures = await job.getIgnoredChildrenFailures();
    for (const [key, reason] of Object.entries(failures)) {
      const m = /-(rows|archives)-(\d+)$/.exec(key);
      if (m) results.push(...(await rowsOfFailedChunk(workDir!, m[1] as 'rows' | 'archives', Number(m[2]), String(reason))));
    }
    const result = await finalizeRun({ runId: runId!, workDir: workDir! }, results, { ...ctx, pushRequests, ...(aborted ? { aborted } : {}) });
    if (data.origin === 'feed' && data.feed && data.sha256) {
      const keys = feedKeys(prefix, data.feed);
      // An aborted run (API unavailable, credential rejected, archive guard) is not an import: the next tick tries again.
      if (result.exitCode !== 3) await conn.sadd(keys.imported, data.sha256);
      await conn.hset(keys.last, { finishedAt: new Date().toISOString(), runId: result.runId, exitCode: String(result.exitCode), file: data.request.file });
    }
    await job.updateProgress({ stage: 'done', rowsRead: result.summary.counts.rows, operationsSent: results.length, errors: result.summary.counts.failed + result.summary.counts.invalid });
    return { runId: result.runId, exitCode: result.exitCode, summary: result.summary, reportDir: result.reportDir, files: result.files };
  };

  const processPush = async (job: Job) => {
    const d = jobPayload('push', job.data);
    try {
      const items = JSON.parse(await readFile(chunkFile(d.workDir, d.kind, d.index), 'utf8'));
      const journalName = `journal-${d.kind}-${d.index}.jsonl`;
      await job.updateProgress({ stage: 'push', operations: (items as unknown[]).length, done: 0 });
      const { value: out, requests } = await scopes.run(() => (d.kind === 'rows' ? executeChunk(d, items as RowPlan[], ctx, journalName) : executeArchives(d, items as ArchiveEntry[], ctx, journalName)));
      const failed = out.filter((r) => r.outcome === 'failed').length;
      await job.updateProgress({ stage: 'push', operations: out.length, done: out.length, failed });
      // One field per chunk, so a chunk run twice (retry, takeover) is counted once.
      const key = runChunksKey(prefix, d.runId);
      await conn.multi().hset(key, `${d.kind}-${d.index}`, `${out.length}:${failed}`).expire(key, 30 * 24 * 3600).exec();
      const result: PushJobResult = { rows: out, requests: requests.product };
      return result;
    } catch (err) {
      // A chunk that cannot succeed by retrying (credential rejected, state missing) fails at once.
      if (!isRetryable(err)) throw new UnrecoverableError((err as Error).message);
      throw err;
    }
  };

  const processFeed = async (job: Job) => {
    const { feed: id } = jobPayload('feeds', job.data);
    const feed = feeds.find((f) => f.id === id);
    if (!feed) return { skipped: `feed ${id} is no longer defined` };
    const keys = feedKeys(prefix, id);
    const pick = await pickFeedFile(feed, async (sha) => (await conn.sismember(keys.imported, sha)) === 1);
    if ('skip' in pick) {
      await conn.hset(keys.last, { tickAt: new Date().toISOString(), tick: pick.file ? `${pick.skip}: ${pick.file}` : pick.skip });
      await job.updateProgress(100);
      return { enqueued: null, skipped: pick.skip };
    }
    const data: ImportJobData = {
      request: { file: pick.file, mapping: feed.mapping, mode: feed.mode, dryRun: feed.dryRun, maxArchiveRatio: feed.archiveGuard.maxRatio, allowArchive: feed.archiveGuard.allow, ...(feed.owner ? { owner: feed.owner } : {}) },
      origin: 'feed', feed: id, sha256: pick.sha256, step: 'prepare',
    };
    const { jobId } = await enqueueImport(importQueue, data);
    await conn.hset(keys.last, { tickAt: new Date().toISOString(), tick: `queued ${jobId}: ${pick.file}` });
    await job.updateProgress(100);
    return { enqueued: jobId, file: pick.file };
  };

  const handlers = {
    import: async (job: Job, token?: string) => {
      try {
        return await processImport(job, token);
      } catch (err) {
        // Waiting for the children is not a failure; a failure no retry can fix (bad mapping, unreadable file) is final.
        if (err instanceof WaitingChildrenError || err instanceof UnrecoverableError || isRetryable(err)) throw err;
        // The code rides along in the reason, so `enqueue --wait` exits as the inline import would (failedCode).
        throw new UnrecoverableError(err instanceof ProductSyncError ? `${err.message} [${err.code}]` : (err as Error).message);
      }
    },
    push: processPush,
    feeds: processFeed,
  };
  // The worker does not start with a queue of the catalog it cannot handle (or a handler the catalog does not know).
  checkHandlers(handlers);

  // A worker killed with SIGKILL holds its job's lock until it expires: lockDuration bounds how long another worker waits.
  const lockDuration = options.lockDurationMs ?? 30_000;
  const workerOpts = { connection: queueConnection(config), prefix, lockDuration, stalledInterval: Math.max(1000, Math.floor(lockDuration / 2)), maxStalledCount: 3 };
  const importWorker = new Worker(QUEUES.import, handlers.import, { ...workerOpts, concurrency: options.importConcurrency ?? 1 });
  const pushWorker = new Worker(QUEUES.push, handlers.push, {
    ...workerOpts, connection: queueConnection(config), concurrency: options.pushConcurrency ?? 2,
    // BullMQ only honours queue.rateLimit() on a worker that has a limiter; this one never binds on its own
    // (API_MAX_RPS is enforced per request by the shared rate above, not per chunk job).
    limiter: { max: 1000, duration: 1000 },
  });
  const feedsWorker = new Worker(QUEUES.feeds, handlers.feeds, { ...workerOpts, connection: queueConnection(config), concurrency: 1 });
  const workers = [importWorker, pushWorker, feedsWorker];
  for (const w of workers) {
    w.on('failed', (job, err) => logger.warn({ queue: w.name, jobId: job?.id, err: err.message }, 'job failed'));
    w.on('error', (err) => logger.error({ queue: w.name, err: err.message }, 'worker error'));
  }

  // One scheduler per feed, upserted by every worker at start: BullMQ keeps one tick per schedule however many run.
  for (const f of feeds) {
    await feedsQueue.upsertJobScheduler(f.id, { pattern: f.schedule, tz: f.timezone }, { name: 'feed-tick', data: { feed: f.id }, opts: JOB_OPTIONS.feeds });
  }
  for (const s of await feedsQueue.getJobSchedulers()) {
    const sid = (s as { key?: string; id?: string }).id ?? (s as { key: string }).key;
    if (!feeds.some((f) => f.id === sid)) await feedsQueue.removeJobScheduler(sid);
  }
  logger.info({ feeds: feeds.map((f) => f.id), prefix }, 'workers started');

  // Locks are renewed by timers: a stretch of synchronous work longer than the lock loses the job to another worker
  // (stalled), which then runs it a second time. Say so when the event loop comes close.
  const loop = monitorEventLoopDelay({ resolution: 20 });
  loop.enable();
  const loopCheck = setInterval(() => {
    const maxMs = loop.max / 1e6;
    loop.reset();
    if (maxMs > lockDuration / 3) logger.warn({ blockedMs: Math.round(maxMs), lockDurationMs: lockDuration }, 'the event loop was blocked for a third of the job lock or more: raise WORKER_LOCK_MS if this repeats');
  }, 5000);
  loopCheck.unref();

  let closing: Promise<void> | undefined;
  return {
    workers,
    feeds,
    close() {
      closing ??= (async () => {
        clearInterval(loopCheck);
        loop.disable();
        await Promise.all(workers.map((w) => w.close()));
        await Promise.all([importQueue.close(), pushQueue.close(), feedsQueue.close()]);
        await cc.close();
        rateConn.disconnect();
        conn.disconnect();
      })();
      return closing;
    },
  };
}

/** For `feeds list`: whether the drop folder exists (a feed pointing nowhere is worth a warning). */
export function feedSourceExists(feed: Feed): boolean {
  return existsSync(resolve(feed.source.dir));
}
