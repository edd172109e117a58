import type { Job, JobSchedulerJson, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { makeEvent } from '../events/catalog.ts';
import { logger } from '../logger.ts';
import { deadlineJobSchema, JOB_OPTIONS } from './catalog.ts';
import { feedKeys } from '../redis-keys.ts';
import type { EventRecorder } from './events-queue.ts';
import { feedRunSucceeded } from './feed-status.ts';
import type { Feed } from './feeds.ts';
import type { RunSummary } from '../pipeline/report/report.ts';

/**
 * Feed deadlines (`expect:` in a feed file): one BullMQ job scheduler per feed that has one, in the events queue, so
 * the check fires at each expected time whether or not a file arrived. The feed's status lives in its `last` hash
 * (feedKeys): `lastSuccessAt` (a run of it succeeded: feedRunSucceeded), `overdue` ("1"/"0"), `overdueSince` — the
 * console and the metrics read these fields — and `expectCheckedAt`, the expected time last checked.
 */
const SCHEDULER_PREFIX = 'deadline-';

/**
 * Upserts a deadline scheduler per feed with `expect`, removes those of feeds without one and clears their deadline
 * status (a feed whose `expect:` was removed while overdue).
 */
export async function upsertDeadlines(
  queue: Queue,
  conn: Redis,
  prefix: string,
  feeds: readonly Feed[],
): Promise<void> {
  const idOf = (s: JobSchedulerJson) => (s as { id?: string }).id ?? s.key;
  const before = (await queue.getJobSchedulers()).map(idOf).filter((id) => id.startsWith(SCHEDULER_PREFIX));
  const now = new Date().toISOString();
  for (const f of feeds) {
    if (!f.expect) continue;
    // The first expected time's window starts when the deadline is first known (there is no expected time before).
    await conn.hsetnx(feedKeys(prefix, f.id).last, 'expectCheckedAt', now);
    await queue.upsertJobScheduler(
      `${SCHEDULER_PREFIX}${f.id}`,
      { pattern: f.expect, tz: f.timezone },
      { name: 'feed-deadline', data: { feed: f.id, deadline: true }, opts: JOB_OPTIONS.deadline },
    );
  }
  for (const id of before)
    if (!feeds.some((f) => f.expect && `${SCHEDULER_PREFIX}${f.id}` === id)) await queue.removeJobScheduler(id);
  // A feed that expects nothing (any more) is not overdue: its mark would stay on the console and in the gauge.
  for (const f of feeds)
    if (!f.expect) await conn.hdel(feedKeys(prefix, f.id).last, 'overdue', 'overdueSince', 'expectCheckedAt');
}

/**
 * A feed's expected time has come: when no run of it succeeded since the expected time before, the feed becomes
 * overdue and feed.missed is recorded, once (a feed already overdue records nothing more until it recovers).
 */
export async function checkDeadline(
  job: Job,
  feeds: readonly Feed[],
  conn: Redis,
  prefix: string,
  recorder: EventRecorder,
): Promise<unknown> {
  const { feed: id } = deadlineJobSchema.parse(job.data);
  const feed = feeds.find((f) => f.id === id);
  if (!feed?.expect) return { skipped: `feed ${id} expects nothing` };
  const key = feedKeys(prefix, id).last;
  // The scheduled time, not the time the job ran: a check run late (or redone) judges the same window.
  const expectedAt = (job.opts as { prevMillis?: number }).prevMillis ?? job.timestamp;
  const h = await conn.hgetall(key);
  // No expected time checked before (the hash was lost): any success so far counts.
  const windowStart = Date.parse(h.expectCheckedAt ?? '') || 0;
  const lastSuccess = Date.parse(h.lastSuccessAt ?? '');
  const ran = Number.isFinite(lastSuccess) && lastSuccess > windowStart;
  let missed = false;
  if (!ran && h.overdue !== '1') {
    missed = true;
    // Recorded before the feed is marked overdue: a worker killed in between checks again and records the same event.
    await recorder.record(
      makeEvent(
        'feed.missed',
        `${id}@${expectedAt}`,
        {
          feed: id,
          expect: feed.expect,
          timezone: feed.timezone,
          expectedAt: new Date(expectedAt).toISOString(),
          windowStart: windowStart ? new Date(windowStart).toISOString() : null,
          lastSuccessAt: h.lastSuccessAt ?? null,
        },
        new Date(expectedAt),
      ),
    );
    await conn.hset(key, { overdue: '1', overdueSince: new Date(expectedAt).toISOString() });
    logger.warn({ feed: id, expectedAt: new Date(expectedAt).toISOString() }, 'feed missed its expected time');
  }
  if (Date.parse(h.expectCheckedAt ?? '') !== expectedAt)
    await conn.hset(key, { expectCheckedAt: new Date(expectedAt).toISOString() });
  return { feed: id, missed, overdue: missed || h.overdue === '1' };
}

/**
 * Whether a run of feed `id` finishing now met the feed's `expect:` deadline (its scorecard's timeliness): met unless
 * the feed is overdue (its expected time passed without a successful run); nothing when the feed expects nothing.
 */
export async function feedRunDeadline(
  conn: Redis,
  prefix: string,
  id: string,
): Promise<{ deadline?: { met: boolean } }> {
  const [checked, overdue] = await conn.hmget(feedKeys(prefix, id).last, 'expectCheckedAt', 'overdue');
  return checked ? { deadline: { met: overdue !== '1' } } : {};
}

/**
 * A run of feed `id` ended: a success (`feedRunSucceeded`: not aborted, no failed row; invalid rows are the sheet's)
 * sets `lastSuccessAt` and, for a feed that was overdue, records feed.recovered (before the status is written) and
 * clears it.
 */
export async function noteFeedRun(
  conn: Redis,
  prefix: string,
  id: string,
  run: { runId: string; jobId?: string; summary: Pick<RunSummary, 'exitCode' | 'aborted' | 'counts'> },
  recorder: EventRecorder,
): Promise<void> {
  if (!feedRunSucceeded(run.summary)) return;
  const key = feedKeys(prefix, id).last;
  const now = new Date();
  const [overdue, overdueSince] = await conn.hmget(key, 'overdue', 'overdueSince');
  if (overdue === '1') {
    await recorder.record(
      makeEvent(
        'feed.recovered',
        `${id}@${run.runId}`,
        { feed: id, runId: run.runId, jobId: run.jobId, overdueSince, recoveredAt: now.toISOString() },
        now,
      ),
    );
  }
  await conn.multi().hset(key, { lastSuccessAt: now.toISOString(), overdue: '0' }).hdel(key, 'overdueSince').exec();
}
