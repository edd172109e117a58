/**
 * One job scheduler per feed of `jobs/`, upserted by every worker at start (BullMQ keeps one tick per schedule however
 * many run; stale ones are removed) and again whenever Redis comes back: a Redis restarted without its data has none
 * left. The feeds' deadlines (feed-deadlines.ts) follow their schedules.
 */
import type { JobSchedulerJson, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { logger } from '../logger.ts';
import { redisState } from '../redis-state.ts';
import { JOB_OPTIONS } from './catalog.ts';
import { upsertDeadlines } from './feed-deadlines.ts';
import type { Feed } from './feeds.ts';

/** Upserts the schedules now and whenever Redis comes back; returns how to stop watching. */
export async function keepFeedSchedules(
  queues: { feedsQueue: Queue; eventsQueue: Queue },
  conn: Redis,
  prefix: string,
  feeds: readonly Feed[],
  jobsDir: string,
): Promise<() => void> {
  const upsert = () => upsertSchedules(queues, conn, prefix, feeds);
  await upsert();
  return redisState.onChange((down) => {
    if (down || feeds.length === 0) return;
    upsert().then(
      (missing) =>
        missing > 0 &&
        logger.warn(
          { feeds: feeds.map((f) => f.id) },
          `Redis came back without ${missing} feed schedule(s) (restarted without its data?): re-created from ${jobsDir}/`,
        ),
      (err: unknown) =>
        logger.warn(
          { err: (err as Error).message },
          'cannot re-create the feed schedules after Redis came back: restart the worker',
        ),
    );
  });
}

/** Upserts one scheduler per feed, removes the others; returns how many were missing. */
async function upsertSchedules(
  { feedsQueue, eventsQueue }: { feedsQueue: Queue; eventsQueue: Queue },
  conn: Redis,
  prefix: string,
  feeds: readonly Feed[],
): Promise<number> {
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
}
