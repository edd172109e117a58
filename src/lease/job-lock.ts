/**
 * A BullMQ job's lock as a fence (api/fence.ts): a worker paused past its lock loses the job to another worker (the
 * stalled-job check hands it out again), and must then send nothing more for it. BullMQ renews the lock by its own
 * timer but tells the processor nothing; this fence extends it too (`job.extendLock`, which succeeds only while the
 * lock is still this worker's token) and knows from its own clock how long the lock is certainly held.
 */
import type { Job } from 'bullmq';
import type { Fence } from '../api/fence.ts';
import { realClock, type Clock } from '../clock.ts';
import { LeaseLostError } from '../errors.ts';

/** The lock of a job being processed, as a fence; stop() when the job is done. */
export interface JobLockFence extends Fence {
  readonly lost: LeaseLostError | null;
  stop(): void;
}

/** Fences the writes of `job` (processed under `token`, locks of `lockMs`) by its lock, timed by `clock`. */
export async function jobLockFence(
  job: Pick<Job, 'id' | 'queueName' | 'extendLock'>,
  token: string,
  lockMs: number,
  clock: Clock = realClock,
): Promise<JobLockFence> {
  const margin = Math.min(2000, lockMs / 10);
  let until = { mono: -Infinity, wall: -Infinity };
  let lost: LeaseLostError | null = null;
  let extending: Promise<void> | undefined;
  const what = `the lock of job ${job.id} (${job.queueName})`;
  const remaining = () => Math.min(until.mono - clock.mono(), until.wall - clock.now());
  const extend = (): Promise<void> =>
    (extending ??= (async () => {
      try {
        const sentAt = { mono: clock.mono(), wall: clock.now() };
        const ok = await job.extendLock(token, lockMs);
        if (!ok) {
          lost ??= new LeaseLostError(`${what} is no longer this worker's: another worker took the job over`);
          return;
        }
        until = { mono: sentAt.mono + lockMs, wall: sentAt.wall + lockMs };
      } finally {
        extending = undefined;
      }
    })());
  const check = () => {
    if (lost) throw lost;
    if (remaining() < margin)
      throw new LeaseLostError(
        `${what} was not extended within ${lockMs / 1000} s (the worker was paused, or Redis did not answer)`,
      );
  };
  await extend();
  const stop = clock.every(Math.max(100, Math.floor(lockMs / 3)), () => void extend().catch(() => undefined));
  return {
    get lost() {
      return lost;
    },
    check,
    async ready() {
      if (lost) throw lost;
      if (remaining() < lockMs / 3) await extend().catch(() => undefined);
      check();
    },
    stop,
  };
}
