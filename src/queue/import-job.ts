/**
 * The import (parent) job of a queued run, in its steps: `prepare` opens the run and adds one push job per chunk as
 * the second pass writes it (run/'s `startQueuedRun`); `wait` waits for the push jobs (its children); `finalize`
 * assembles the report (`finishRun`), records the run's events and the feed's bookkeeping, and frees the owner lease.
 * An import whose owner's lease another run holds waits its turn (a delay, not a failed attempt).
 */
import { DelayedError, UnrecoverableError, WaitingChildrenError, type Job, type Queue } from 'bullmq';
import { isRetryable, LeaseLostError, ProductSyncError } from '../errors.ts';
import { logger } from '../logger.ts';
import { recoverChunk } from '../pipeline/run/chunks.ts';
import { describeHolder, LeaseBusyError } from '../lease/lease.ts';
import { readRunState } from '../pipeline/run/run-state.ts';
import {
  finishRun,
  startQueuedRun,
  type ImportRequest,
  type RunContext,
  type RunProgress,
  type RunResult,
} from '../pipeline/run/run.ts';
import { JOB_OPTIONS, jobPayload, pushJobId, QUEUES, type ImportJobData } from './catalog.ts';
import { feedRunDeadline, noteFeedRun } from './feed-deadlines.ts';
import type { JobContext } from './job-context.ts';
import { jobLockFence } from '../lease/job-lock.ts';
import { chunkPriority } from './owner-slots.ts';
import type { PushJobResult } from './push-job.ts';

/** An import job's data, as read from the job. */
type ImportPayload = ReturnType<typeof jobPayload<'import'>>;

/** What the import job needs besides the shared context. */
export interface ImportJobDeps extends JobContext {
  pushQueue: Queue;
  reportDir: string;
  /** Row plans per chunk job. */
  chunkSize: number;
  /** The end of a feed's import (feed-tick-job.ts's recordFeedImport). */
  feedImportDone(jobId: string, data: ImportJobData, result: RunResult): Promise<void>;
}

/** The import queue's handler: the steps below, and what a failure means (waiting, retrying, failing for good). */
export function importJobHandler(d: ImportJobDeps): (job: Job, token?: string) => Promise<unknown> {
  return async (job, token) => {
    try {
      const data = jobPayload('import', job.data);
      if (data.step === 'prepare') await prepareImport(d, job, token!, data);
      if (await job.moveToWaitingChildren(token!)) throw new WaitingChildrenError();
      return await finalizeImport(d, job, token!, data);
    } catch (err) {
      return await importFailed(d, job, token, err);
    }
  };
}

/** `prepare`: opens the run, adds a push job per chunk as soon as it is written, stores the run in the job's data. */
async function prepareImport(d: ImportJobDeps, job: Job, token: string, data: ImportPayload): Promise<void> {
  await d.recorder.runStarted(job);
  const req: ImportRequest = {
    ...data.request,
    mode: data.request.mode as ImportRequest['mode'],
    reportDir: d.reportDir,
    // Kept in run.json: the run's undo names the same OpenLineage job and sheet.
    ...(data.origin === 'feed' && data.feed ? { feed: data.feed } : {}),
    ...(data.sourceLocation ? { sourceLocation: data.sourceLocation } : {}),
  };
  // Its writes (brands created while resolving) are fenced by the job's lock as well as by the run's lease.
  const lock = await jobLockFence(job, token, d.lockDuration, d.clock);
  // The run's owner (its chunks' per-owner cap) and each chunk's place in line (owner-slots.ts's chunkPriority).
  let owner: string | undefined;
  let rowChunks = 0;
  // OPENLINEAGE_URL set: each chunk is a run whose parent is this job's run (none otherwise).
  const lineage = d.recorder.lineageParentOf(job);
  const lease: RunContext['lease'] = {
    queued: { jobId: job.id! },
    onGranted: (l, at) => {
      owner = at.owner;
      // How long the run waited for a worker and its owner's lease (/metrics, per owner).
      d.metrics?.recordQueueWait('import', at.owner, (Date.now() - job.timestamp) / 1000);
      return d.keeper.register({
        runId: l.holder.runId,
        owner: at.owner,
        api: at.api,
        grant: l.grant,
        holder: l.holder,
        ttlMs: l.ttlMs,
        importJobId: job.id!,
      });
    },
  };
  // Each chunk job is added as soon as the second pass has written its chunk: pushing starts while the pass goes on.
  const run = await d
    .track(
      startQueuedRun(
        req,
        {
          ...d.ctx,
          chunkSize: d.chunkSize,
          onProgress: progressOf(job),
          lease,
          fences: [lock],
        },
        (c) => {
          if (c.kind === 'rows') rowChunks = Math.max(rowChunks, c.index + 1);
          return d.pushQueue
            .add(
              c.kind,
              {
                runId: c.runId,
                workDir: c.workDir,
                kind: c.kind,
                index: c.index,
                ...(owner ? { owner } : {}),
                ...(c.plan ? { plan: c.plan } : {}),
                ...(lineage ? { lineage } : {}),
              },
              {
                ...JOB_OPTIONS.push,
                jobId: pushJobId(c),
                // Archives come after the run's row chunks.
                priority: chunkPriority(c.kind === 'rows' ? c.index : rowChunks + c.index),
                parent: { id: job.id!, queue: job.queueQualifiedName },
                ignoreDependencyOnFailure: true,
              },
            )
            .then(() => undefined);
        },
      ),
    )
    .finally(() => lock.stop());
  // The push stage's counts are summed from the chunks as they finish (runStatus); this is where they start.
  await job.updateProgress({ stage: 'push', rowsRead: run.rows, operationsSent: 0, errors: 0, rowsTotal: run.rows });
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

/** `finalize`, once every push job ended: the report, the run's events, the feed's bookkeeping, the lease freed. */
async function finalizeImport(d: ImportJobDeps, job: Job, token: string, data: ImportPayload) {
  // Read again: the prepare step has stored the run's id and directory in the job's data.
  const { workDir, runId } = jobPayload('import', job.data);
  const values = Object.values(await job.getChildrenValues<PushJobResult>());
  const { plan } = await readRunState(workDir!);
  for (const [key, reason] of Object.entries(await job.getIgnoredChildrenFailures())) {
    const m = /-(rows|archives)-(\d+)$/.exec(key);
    if (!m) continue;
    const kind = m[1] as 'rows' | 'archives';
    const index = Number(m[2]);
    // A chunk job of plans made again since failed for a chunk that is another job's now.
    if (!key.endsWith(`:${pushJobId({ runId: runId!, kind, index, ...(plan ? { plan } : {}) })}`)) continue;
    // A chunk out of retries: what its journal confirmed keeps its outcome, the rest is `failed`.
    await recoverChunk(workDir!, kind, index, String(reason));
  }
  // The late-duplicate sweep before the report writes (archives): fenced by this job's lock as well as the lease.
  const lock = await jobLockFence(job, token, d.lockDuration, d.clock);
  const feed = data.origin === 'feed' && data.feed ? data.feed : undefined;
  const result = await finishRun(workDir!, {
    ...d.ctx,
    // The scorecard's feed and timeliness: read before noteFeedRun clears the feed's overdue mark.
    ...(feed ? { scorecard: { feed, ...(await feedRunDeadline(d.conn, d.prefix, feed)) } } : {}),
    pushRequests: values.reduce((n, v) => n + (v?.requests ?? 0), 0),
    pushApi: values.map((v) => v?.api),
    guard: lock,
    ...(data.waitLockSeconds !== undefined ? { leaseWaitMs: data.waitLockSeconds * 1000 } : {}),
  }).finally(() => lock.stop());
  // Recorded before the job returns and before the feed's hash is written: a worker killed in between redoes this
  // step, and records the same events again (a no-op).
  await d.recorder.runEnded(job, result);
  if (data.origin === 'feed' && data.feed)
    await noteFeedRun(d.conn, d.prefix, data.feed, { ...result, jobId: job.id! }, d.recorder);
  // The report is written: the next run of this owner may start (also a run that ended at its prepare step, with no
  // chunk to push: an archive guard that tripped, an empty sheet).
  if (runId) await d.keeper.finish(runId);
  await d.feedImportDone(job.id!, data, result);
  d.metrics?.recordRun(result.summary, data.origin === 'feed' ? data.feed : undefined);
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
}

/** The job's progress during `prepare`, at most once a second. */
function progressOf(job: Job): (p: RunProgress) => void {
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
}

/** What an import's failure means: a wait for its owner's lease, a retry, or a failure for good. Always throws. */
async function importFailed(d: ImportJobDeps, job: Job, token: string | undefined, err: unknown): Promise<never> {
  // Another run holds this owner's lease: this import waits its turn (a delay, not a failed attempt), as long as its
  // --wait-lock allows (no limit by default); its progress says whom it waits for (the console shows it).
  if (err instanceof LeaseBusyError) {
    const data = jobPayload('import', job.data);
    const since = data.leaseWaitSince ?? d.clock.now();
    if (data.waitLockSeconds === undefined || d.clock.now() - since < data.waitLockSeconds * 1000) {
      if (data.leaseWaitSince === undefined) await job.updateData({ ...data, leaseWaitSince: since });
      await job.updateProgress({
        stage: 'waiting',
        waitingFor: describeHolder(err.holder),
        since: new Date(since).toISOString(),
      });
      logger.info({ jobId: job.id, holder: describeHolder(err.holder) }, 'import waits for the lease of its owner');
      await job.moveToDelayed(d.clock.now() + 1000 + Math.floor(Math.random() * 1000), token);
      throw new DelayedError();
    }
  }
  // This worker lost the job to another one (paused past its lock): what it throws is ignored by BullMQ.
  if (err instanceof LeaseLostError && /^lease lost: the lock of job/.test(err.message)) throw err;
  // Waiting for the children is not a failure; a failure no retry can fix (bad mapping, unreadable file) is final.
  if (
    err instanceof WaitingChildrenError ||
    err instanceof DelayedError ||
    err instanceof UnrecoverableError ||
    isRetryable(err)
  )
    throw err;
  // Failed for good: its owner lease is freed now rather than when the keeper notices.
  const runId = (job.data as ImportJobData).runId;
  if (runId) await d.keeper.finish(runId).catch(() => undefined);
  // The code rides along in the reason, so `enqueue --wait` exits as the inline import would (failedCode).
  throw new UnrecoverableError(
    err instanceof ProductSyncError ? `${err.message} [${err.code}]` : (err as Error).message,
  );
}
