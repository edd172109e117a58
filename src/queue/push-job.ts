/** The push job: sends one chunk of a queued run (run/'s `pushChunk`), fenced by its job lock and the run's lease. */
import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import { newTally } from '../api/api-limiter.ts';
import { isRetryable } from '../errors.ts';
import { chunkApiFigures, type ChunkApiFigures } from '../pipeline/report/api-figures.ts';
import { leaseApi } from '../pipeline/run/open-run.ts';
import { pushChunk } from '../pipeline/run/run.ts';
import { runChunksKey } from '../redis-keys.ts';
import { jobPayload } from './catalog.ts';
import type { JobContext } from './job-context.ts';
import { jobLockFence } from '../lease/job-lock.ts';
import { chunkEnded, chunkStarted } from './chunk-lineage.ts';
import type { OwnerSlots } from './owner-slots.ts';

/** What a push (chunk) job returns (kept in Redis, so counts only: the rows' outcomes are in the run directory). */
export interface PushJobResult {
  rows: number;
  failed: number;
  requests: number;
  /** What the chunk saw of the product API's limits (summary.json `api`, merged). */
  api?: ChunkApiFigures;
}

/** The push queue's handler; `stopSending` is aborted when the worker stops without Redis. */
export function pushJobHandler(
  d: JobContext,
  stopSending: AbortSignal,
): (job: Job, token?: string) => Promise<PushJobResult> {
  return async (job, token) => {
    const c = jobPayload('push', job.data);
    // Its owner's slot (docs/queue.md, "Fairness"): over the owner's cap, the chunk waits its turn (a delay).
    const api = leaseApi(d.ctx);
    if (c.owner && d.ownerSlots) await slotOrDelay(d.ownerSlots, job, token!, c.owner, api);
    d.metrics?.recordQueueWait('push', c.owner ?? '', (Date.now() - job.timestamp) / 1000);
    if (c.owner && d.ownerSlots)
      return d.ownerSlots.hold(c.owner, api, job.id!, () => sendChunk(d, stopSending, job, token));
    return sendChunk(d, stopSending, job, token);
  };
}

/**
 * Takes a slot of the chunk's owner, or moves the chunk back to the delayed set for about a second (not a failed
 * attempt) when the owner has its cap of chunks in progress. It asks a few times first, a few tens of ms apart: a
 * chunk of another owner may wait that long behind it, but the fleet's idle slots do not spin through the capped
 * owner's chunks.
 */
async function slotOrDelay(slots: OwnerSlots, job: Job, token: string, owner: string, api: string): Promise<void> {
  for (let i = 0; i < 4; i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, 40 + Math.floor(Math.random() * 40)));
    if (await slots.take(owner, api, job.id!)) return;
  }
  await job.moveToDelayed(Date.now() + 500 + Math.floor(Math.random() * 500), token);
  throw new DelayedError();
}

/** Sends the chunk, fenced by the job's lock; what it returns is kept in Redis. */
async function sendChunk(d: JobContext, stopSending: AbortSignal, job: Job, token?: string): Promise<PushJobResult> {
  const c = jobPayload('push', job.data);
  // OPENLINEAGE_URL set: the chunk's run starts (chunk-lineage.ts); a Redis that refuses it fails this attempt only.
  await chunkStarted(d.recorder, job);
  const lock = await jobLockFence(job, token!, d.lockDuration, d.clock);
  try {
    const t0 = performance.now();
    const limiter = d.ctx.limiter;
    // The chunk's own requests, refusals, answers and time waited on the API's limits, counted through clients of its
    // own (a worker runs several chunks at once).
    const tally = limiter ? newTally() : undefined;
    const clients = d.ctx.clients.forRun(tally ? { tally } : {});
    const out = await d.track(pushChunk(c, { ...d.ctx, clients, signal: stopSending }, lock));
    await job.updateProgress({ stage: 'push', operations: out.rows, done: out.rows, failed: out.failed });
    // One field per chunk, so a chunk run twice (retry, takeover) is counted once.
    const key = runChunksKey(d.prefix, c.runId);
    await d.conn
      .multi()
      .hset(key, `${c.kind}-${c.index}`, `${out.rows}:${out.failed}`)
      .expire(key, 30 * 24 * 3600)
      .exec();
    // Rows stay in the run directory: the job's return value (kept in Redis) is only counts.
    // Recorded before the job returns: a worker killed in between pushes the chunk again, records it again (a no-op).
    await chunkEnded(d.recorder, job);
    const result: PushJobResult = {
      rows: out.rows,
      failed: out.failed,
      requests: clients.stats.product,
      ...(limiter && tally ? { api: chunkApiFigures(tally, limiter.snapshot(), performance.now() - t0) } : {}),
    };
    return result;
  } catch (err) {
    // This worker lost the job to another one (paused past its lock): whatever it throws, BullMQ ignores it.
    if (lock.lost) throw lock.lost;
    // Stopped by the worker's stop: the chunk is pushed again, from its journal, by whichever worker takes it.
    if (stopSending.aborted) throw err;
    // A chunk that cannot succeed by retrying (credential rejected, state missing) fails at once.
    if (!isRetryable(err)) throw new UnrecoverableError((err as Error).message);
    throw err;
  } finally {
    lock.stop();
  }
}
