import type { JobSchedulerJson, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { RunSummary } from '../pipeline/report/report.ts';
import { feedKeys } from '../redis-keys.ts';

/** A feed as the console's list and the metrics show it: its schedule, next tick, last success, whether overdue. */
export interface FeedStatus {
  id: string;
  schedule: string | null;
  timezone: string;
  /** The next tick of its job scheduler (ISO), null when none is due. */
  nextTick: string | null;
  /** When a run of it last succeeded (ended neither aborted nor with failed rows), null when never (ISO). */
  lastSuccessAt: string | null;
  /** Its expected file did not come in time (`expect:`, set by the feed deadlines). */
  overdue: boolean;
  /** Its last run and last tick, as `feeds list` prints them (absent when none). */
  lastRun?: { finishedAt: string; runId: string; exitCode: number; file: string };
  lastTick?: { at: string; what: string };
}

const schedulerId = (s: JobSchedulerJson) => s.id ?? s.key;

/**
 * The feeds the workers schedule (one job scheduler per feed in the feeds queue, kept by every worker from its
 * `jobs/`), each with its bookkeeping hash (`feedKeys().last`), by id.
 */
export async function feedStatuses(feedsQueue: Queue, conn: Redis, prefix: string): Promise<FeedStatus[]> {
  const schedulers = (await feedsQueue.getJobSchedulers()).filter((s) => schedulerId(s));
  const lasts = await Promise.all(schedulers.map((s) => conn.hgetall(feedKeys(prefix, schedulerId(s)!).last)));
  return schedulers
    .map((s, i): FeedStatus => {
      const last = lasts[i] ?? {};
      return {
        id: schedulerId(s)!,
        schedule: s.pattern ?? null,
        timezone: s.tz ?? 'UTC',
        nextTick: s.next ? new Date(s.next).toISOString() : null,
        lastSuccessAt: last.lastSuccessAt || null,
        overdue: last.overdue === '1',
        ...(last.finishedAt
          ? {
              lastRun: {
                finishedAt: last.finishedAt,
                runId: last.runId ?? '',
                exitCode: Number(last.exitCode),
                file: last.file ?? '',
              },
            }
          : {}),
        ...(last.tickAt ? { lastTick: { at: last.tickAt, what: last.tick ?? '' } } : {}),
      };
    })
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/**
 * Whether a feed's run counts as a success (its `lastSuccessAt`, `product_sync_feed_last_success_timestamp_seconds`):
 * it ended without being aborted and without a failed row. Invalid rows do not make it fail: the file came and was
 * imported, its problems are the sheet's (the report lists them).
 */
export function feedRunSucceeded(summary: Pick<RunSummary, 'exitCode' | 'aborted' | 'counts'>): boolean {
  return summary.exitCode !== 3 && summary.aborted === undefined && summary.counts.failed === 0;
}
