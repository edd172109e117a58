/**
 * The feed tick job (a feed's schedule, `feeds run`, or the follow-up after an import): lists the feed's source and
 * queues its oldest new file (feed-tick.ts); and what the end of a feed's import writes in the feed's bookkeeping.
 */
import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import type { Job, Queue } from 'bullmq';
import type { Config } from '../config.ts';
import { DEFAULT_LIMITS } from '../formats/limits.ts';
import type { RunResult } from '../pipeline/run/run.ts';
import { feedKeys } from '../redis-keys.ts';
import { parseAllowHosts } from '../sources/address-guard.ts';
import { sourceLabel } from '../sources/open.ts';
import { JOB_OPTIONS, jobPayload, type ImportJobData } from './catalog.ts';
import type { JobContext } from './job-context.ts';
import { finishFeedImport, runFeedTick, type FeedTickDeps } from './feed-tick.ts';
import type { Feed } from './feeds.ts';

/** What a tick needs; the worker stopping aborts `signal`, cutting the ticks in hand (their listings, downloads). */
export function feedTickDeps(
  config: Config,
  d: Pick<JobContext, 'conn' | 'prefix'>,
  queues: { importQueue: Queue; feedsQueue: Queue },
  signal: AbortSignal,
): FeedTickDeps {
  return {
    redis: d.conn,
    prefix: d.prefix,
    importQueue: queues.importQueue,
    copyRoot: resolve(config.UPLOAD_DIR, 'feeds'),
    allowHosts: parseAllowHosts(config.SOURCE_ALLOW_HOSTS),
    maxBytes: DEFAULT_LIMITS.fileBytes,
    requeue: async (feed, later) => {
      await queues.feedsQueue.add(
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
    signal,
  };
}

/** The feeds queue's handler. */
export function feedTickHandler(
  d: Pick<JobContext, 'recorder' | 'metrics'>,
  feeds: readonly Feed[],
  tickDeps: FeedTickDeps,
): (job: Job) => Promise<unknown> {
  return async (job) => {
    const { feed: id } = jobPayload('feeds', job.data);
    const feed = feeds.find((f) => f.id === id);
    if (!feed) return { skipped: `feed ${id} is no longer defined` };
    const result = await runFeedTick(feed, tickDeps, { nominalTime: scheduledFor(job) });
    if (result.stopped) return result;
    // Events: a source that failed is a run that could not start (run.failed); a tick of the schedule (or `feeds run`)
    // that found nothing to queue says so (feed.no_new_file), a follow-up tick after an import does not.
    if (result.error) {
      await d.recorder.sourceFailed(id, job, sourceLabel(feed.source), feed.mapping, result.error);
      d.metrics?.recordSourceError(id);
    } else if (result.enqueued === null && !job.data.followUp && !/^(import |another tick)/.test(result.skipped ?? ''))
      await d.recorder.noNewFile(id, job, result.skipped ?? 'nothing new', result.file ?? null);
    await job.updateProgress(100);
    return result;
  };
}

/**
 * When a tick of the feed's schedule was due (ISO 8601): the time its job scheduler planned it for, which BullMQ puts
 * in the job's id (`repeat:<feed>:<ms>`) — not when the job was added (the previous tick's start) or taken. Undefined
 * for a tick that is no schedule's: `feeds run`, a follow-up after an import, a tick that waits for a file to settle.
 */
export function scheduledFor(job: Job): string | undefined {
  const ms = job.repeatJobKey ? Number(/^repeat:.+:(\d+)$/.exec(job.id ?? '')?.[1]) : NaN;
  return Number.isFinite(ms) && ms > 0 ? new Date(ms).toISOString() : undefined;
}

/**
 * The end of a feed's import (the import job's finalize step): its file is imported (unless the run aborted), the
 * feed's last run noted, its ledger told; the next file of the feed goes.
 */
export async function recordFeedImport(
  d: Pick<JobContext, 'conn' | 'prefix'>,
  feeds: readonly Feed[],
  tickDeps: FeedTickDeps,
  jobId: string,
  data: ImportJobData,
  result: RunResult,
): Promise<void> {
  if (data.origin !== 'feed' || !data.feed || !data.sha256) return;
  const keys = feedKeys(d.prefix, data.feed);
  // An aborted run (API unavailable, credential rejected, archive guard) is not an import: the next tick tries again.
  if (result.exitCode !== 3) await d.conn.sadd(keys.imported, data.sha256);
  // `lastSuccessAt` is noteFeedRun's (feed-deadlines.ts), written with the run's events.
  await d.conn.hset(keys.last, {
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
}
