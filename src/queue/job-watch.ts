/**
 * Noticing that a queued job is gone while someone waits for it. A Redis restarted without persistence comes back
 * empty: the job, its events and its schedules are gone, and BullMQ's `waitUntilFinished` would wait for ever for an
 * event that cannot come. The waiter asks, every few seconds, whether the job still exists.
 */
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { ProductSyncError } from '../errors.ts';
import { redact } from '../redact.ts';

// How often the waiter asks whether its job still exists.
const EVERY_MS = 5000;

/** Redis's `run_id` (new at every start of the server), or null when it cannot be read. */
export async function redisRunId(conn: Redis): Promise<string | null> {
  const info = await conn.info('server').catch(() => '');
  return /^run_id:(\S+)/m.exec(info)?.[1] ?? null;
}

/**
 * PS_ERR_JOB_LOST (exit 3): what happened to job `jobId` and what to do. `restarted`: Redis's run_id changed meanwhile.
 */
export function jobLost(jobId: string, url: string, restarted: boolean): ProductSyncError {
  const what = restarted
    ? `Redis at ${redact(url)} restarted without its data (it runs without persistence: give it appendonly yes, see docs/queue.md)`
    : `it was removed from Redis at ${redact(url)} (flushed or deleted)`;
  return new ProductSyncError(
    'PS_ERR_JOB_LOST',
    `run ${jobId} is gone from the queue: ${what}. Whether it ran, and how far, is unknown here: enqueue the same sheet again — the run resumes from its journal in the report directory and sends nothing twice`,
  );
}

/**
 * Watches job `jobId` of `queue`: `gone` rejects with {@link jobLost} once the job no longer exists (asked every few
 * seconds; a question waits while Redis is away) and never resolves; `lostNow()` asks at once (BullMQ's own wait may
 * fail on the missing job first); `stop()` ends the watch.
 */
export function watchJob(
  queue: Queue,
  conn: Redis,
  url: string,
  jobId: string,
  // Redis's run_id when the job was queued: read when the watch starts, Redis may already be gone.
  runIdAtStart: Promise<string | null> = redisRunId(conn),
  everyMs = EVERY_MS,
): { gone: Promise<never>; lostNow(): Promise<ProductSyncError | null>; stop(): void } {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const lostNow = async (): Promise<ProductSyncError | null> => {
    if ((await queue.getJobState(jobId).catch(() => null)) !== 'unknown') return null;
    const [before, now] = await Promise.all([runIdAtStart, redisRunId(conn)]);
    return jobLost(jobId, url, before !== null && now !== null && now !== before);
  };
  // One question is bounded: a command caught by the connection's loss may never be answered (seen: an enqueue --wait
  // that hung after a Redis restart); an unanswered question counts as "not known yet" and is asked again.
  const boundedLostNow = () =>
    new Promise<ProductSyncError | null>((res) => {
      const t = setTimeout(() => res(null), Math.max(1000, everyMs));
      lostNow().then(
        (v) => (clearTimeout(t), res(v)),
        () => (clearTimeout(t), res(null)),
      );
    });
  const gone = new Promise<never>((_, reject) => {
    const check = async () => {
      const lost = stopped ? null : await boundedLostNow();
      if (stopped) return;
      if (lost) reject(lost);
      else timer = setTimeout(() => void check(), everyMs);
    };
    timer = setTimeout(() => void check(), everyMs);
  });
  // A watch stopped before it saw anything leaves no unhandled rejection behind.
  gone.catch(() => undefined);
  return {
    gone,
    lostNow,
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
