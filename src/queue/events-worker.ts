import {
  DelayedError,
  UnrecoverableError,
  WaitingChildrenError,
  type BackoffStrategy,
  type Job,
  type Worker,
} from 'bullmq';
import type { Redis } from 'ioredis';
import type { Config } from '../config.ts';
import { LeaseLostError } from '../errors.ts';
import { logger } from '../logger.ts';
import { checkDeadline } from './feed-deadlines.ts';
import { deliveryBackoff, processDelivery, type EventRecorder } from './events-queue.ts';
import type { Feed } from './feeds.ts';

/** The events queue's handler: deliveries (`deliver`) and feed deadline checks (`feed-deadline`). */
export function eventsHandler(
  config: Config,
  recorder: EventRecorder,
  feeds: readonly Feed[],
  conn: Redis,
  prefix: string,
): (job: Job) => Promise<unknown> {
  return (job) =>
    job.name === 'feed-deadline'
      ? checkDeadline(job, feeds, conn, prefix, recorder)
      : processDelivery(job, recorder.endpoints, config);
}

/** The events worker's settings: the delivery backoff (a custom BullMQ strategy), and how many deliveries at once. */
export function eventsWorkerSettings(config: Config): {
  concurrency: number;
  settings: { backoffStrategy: BackoffStrategy };
} {
  // Deliveries wait on endpoints, not on this process: several at once, so one slow endpoint does not hold the rest.
  return { concurrency: 8, settings: { backoffStrategy: deliveryBackoff(config) } };
}

/**
 * True when `err`, thrown by an import job's handler, fails the job for good: an UnrecoverableError, or any other
 * failure on its last attempt. A wait (children, delay) or a job taken over by another worker is not one.
 */
export function failsForGood(job: Job, err: unknown): boolean {
  if (err instanceof WaitingChildrenError || err instanceof DelayedError) return false;
  if (err instanceof LeaseLostError && /^lease lost: the lock of job/.test(err.message)) return false;
  if (err instanceof UnrecoverableError) return true;
  return job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
}

/** How a job that failed for good is told: an import's run.failed by default (a chunk's FAIL: chunk-lineage.ts). */
type RecordFailure = (recorder: EventRecorder, job: Job, err: unknown) => Promise<void>;
const runFailed: RecordFailure = (recorder, job, err) =>
  recorder
    .runFailed(job, err)
    .catch((e: unknown) => logger.warn({ jobId: job.id, err: (e as Error).message }, 'cannot record run.failed'));

/** Wraps a handler: a job that fails for good records its failure (`record`) before BullMQ records it. */
export function recordingFailures<A extends unknown[], R>(
  recorder: EventRecorder,
  handler: (job: Job, ...rest: A) => Promise<R>,
  record: RecordFailure = runFailed,
): (job: Job, ...rest: A) => Promise<R> {
  return async (job, ...rest) => {
    try {
      return await handler(job, ...rest);
    } catch (err) {
      if (failsForGood(job, err)) await record(recorder, job, err);
      throw err;
    }
  };
}

/**
 * An import job BullMQ failed itself, found stalled too often (its workers were killed while they held it): no handler
 * saw that failure, so run.failed is recorded when the worker that found it reports it.
 */
export function recordStalledFailures(
  worker: Worker,
  recorder: EventRecorder,
  record: RecordFailure = runFailed,
): void {
  worker.on('failed', (job, err) => {
    if (!job || !/stalled more than allowable limit/i.test(err?.message ?? '')) return;
    void record(recorder, job, err);
  });
}
