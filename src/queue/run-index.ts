/**
 * The runs newest queued first, for the console's `GET /runs`: a Redis sorted set of import job ids scored by their
 * queued time (BullMQ's `timestamp`), written where every import job is added (enqueueImport: uploads, `enqueue`, feed
 * ticks, re-runs). A page reads `limit + 1` live entries after its cursor — not every kept job — so its cost follows
 * the page, not the queue's history.
 *
 * BullMQ removes finished jobs by itself (removeOnComplete / removeOnFail) without telling anyone: an entry whose job
 * is gone is dropped when a page meets it, and each enqueue checks the oldest entries (the ones BullMQ removes first).
 * A queue that ran before the index existed has its kept jobs indexed at the first listing.
 */
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { runIndexKeys } from '../redis-keys.ts';

/** A page of import job ids, newest queued first, and the cursor of the next page (null on the last). */
export interface RunPage {
  ids: string[];
  next: string | null;
}

/** An entry of the index: a run's job id and queued time (ms). */
interface Entry {
  id: string;
  at: number;
}

/** The oldest entries each enqueue checks for jobs BullMQ removed. */
const TRIM_OLDEST = 8;

// The ids among ARGV[2..] whose job (ARGV[1] .. id) still exists; the others leave the index (KEYS[1]). One script:
// a job replaced meanwhile (removed, then added again with its entry) is never dropped between the two.
const LIVE_SCRIPT = `
local live = {}
for i = 2, #ARGV do
  if redis.call('exists', ARGV[1] .. ARGV[i]) == 1 then
    live[#live + 1] = ARGV[i]
  else
    redis.call('zrem', KEYS[1], ARGV[i])
  end
end
return live`;

/** The queue's ioredis connection (BullMQ's backend types it as its own narrower client interface). */
const redisOf = async (queue: Queue): Promise<Redis> => (await queue.getBackend().client) as unknown as Redis;

/** The index's keys: the sorted set, and the mark that the jobs kept before it were indexed. */
const keys = (queue: Queue) => runIndexKeys((name) => queue.toKey(name));

/** The ids of `ids` whose job still exists, in their order; the entries of the others are removed. */
async function liveIds(queue: Queue, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const client = await redisOf(queue);
  const k = keys(queue);
  return (await client.eval(LIVE_SCRIPT, 1, k.index, k.jobs, ...ids)) as string[];
}

/** Indexes a run just added (its queued time is the job's timestamp), and drops entries of jobs BullMQ removed. */
export async function indexRun(queue: Queue, id: string, queuedAt: number): Promise<void> {
  const client = await redisOf(queue);
  const k = keys(queue);
  await client.zadd(k.index, queuedAt, id);
  await liveIds(queue, await client.zrange(k.index, 0, String(TRIM_OLDEST - 1)));
}

/** Indexes the jobs kept before the index existed (once: the mark says it was done). */
async function indexKeptJobs(queue: Queue): Promise<void> {
  const client = await redisOf(queue);
  const k = keys(queue);
  if ((await client.exists(k.built)) === 1) return;
  const ids = [
    ...new Set(
      // From 0 to -1: every one (getRanges's default end is 1, two of each state).
      await queue.getRanges(
        ['active', 'waiting', 'waiting-children', 'prioritized', 'completed', 'failed', 'delayed'],
        0,
        -1,
      ),
    ),
  ];
  for (let i = 0; i < ids.length; i += 1000) {
    const batch = ids.slice(i, i + 1000);
    const times = await Promise.all(
      batch.map(async (id) => Number((await client.hget(queue.toKey(id), 'timestamp')) ?? 0)),
    );
    await client.zadd(k.index, ...batch.flatMap((id, j) => [times[j]!, id]));
  }
  await client.set(k.built, '1');
}

/**
 * The import jobs newest queued first (queued time, then id, both descending), `limit` of them after the cursor
 * `before` (a `next` of an earlier page: `<queued ms>.<id>`, so a page holds even when the job it names is gone).
 */
export async function listRunIds(queue: Queue, limit: number, before?: string): Promise<RunPage> {
  await indexKeptJobs(queue);
  const client = await redisOf(queue);
  const { index } = keys(queue);
  // The entry the page starts after: equal times are ordered by id, descending (the set's order, read in reverse).
  let bound: Entry | undefined;
  if (before) {
    const dot = before.indexOf('.');
    bound = { at: Number(before.slice(0, dot)), id: before.slice(dot + 1) };
  }
  const page: Entry[] = [];
  // limit + 1 live entries: the one after the page says whether there is a next page. Each read starts at the last
  // entry seen (not at an offset, which entries added or dropped meanwhile would shift), and takes the entries of its
  // time too: the ones up to it are left out here.
  while (page.length <= limit) {
    const want = limit + 1 - page.length;
    const ties = bound ? await client.zcount(index, bound.at, bound.at) : 0;
    const raw = await client.zrevrangebyscore(
      index,
      bound?.at ?? '+inf',
      '-inf',
      'WITHSCORES',
      'LIMIT',
      0,
      want + ties,
    );
    const read: Entry[] = [];
    for (let i = 0; i < raw.length; i += 2) read.push({ id: raw[i]!, at: Number(raw[i + 1]) });
    const b = bound;
    const fresh = b ? read.filter((e) => e.at < b.at || e.id < b.id) : read;
    if (fresh.length === 0) break;
    const live = new Set(
      await liveIds(
        queue,
        fresh.map((e) => e.id),
      ),
    );
    page.push(...fresh.filter((e) => live.has(e.id)));
    bound = fresh.at(-1);
    if (read.length < want + ties) break;
  }
  const shown = page.slice(0, limit);
  const last = shown.at(-1);
  return { ids: shown.map((e) => e.id), next: last && page.length > limit ? `${last.at}.${last.id}` : null };
}
