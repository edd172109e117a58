/**
 * Where a queued run is in line (docs/queue.md, "Fairness"), for the console's runs list: a run not started yet, the
 * import jobs a worker takes before it; a run pushing, what its next chunk is doing and the chunks a worker takes
 * before it. Read from BullMQ's lists in Redis: the wait list is taken from its tail, prioritized jobs (a sorted set
 * scored by priority, then order of arrival) after it.
 */
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { QUEUES } from './catalog.ts';

/** A run's place in line: `ahead` jobs go first; `next`: what its next chunk is doing (a run pushing). */
export interface RunLine {
  ahead: number;
  next?: 'running' | 'in line' | 'held back';
}

/** Jobs a worker takes before `jobId` from the queue whose keys `key(name)` builds; null when it is not waiting. */
async function aheadOf(redis: Redis, key: (name: string) => string, jobId: string): Promise<number | null> {
  const [waiting, pos, score] = await Promise.all([
    redis.llen(key('wait')),
    redis.lpos(key('wait'), jobId),
    redis.zscore(key('prioritized'), jobId),
  ]);
  if (pos !== null) return waiting - 1 - pos;
  if (score === null) return null;
  return waiting + (await redis.zcount(key('prioritized'), '-inf', `(${score}`));
}

/** The place in line of an import job waiting for a worker. */
export async function importLine(queue: Queue, jobId: string): Promise<RunLine | null> {
  const redis = (await queue.getBackend().client) as unknown as Redis;
  const ahead = await aheadOf(redis, (k) => queue.toKey(k), jobId);
  return ahead === null ? null : { ahead };
}

/**
 * The place in line of a run pushing its chunks: its first chunk not finished (`done`: the run's finished chunks,
 * `rows-3`…), running, in line (and the chunks ahead of it), or held back (delayed: its owner's cap, or a retry's
 * backoff).
 */
export async function pushLine(queue: Queue, runId: string, chunks: number, done: Set<string>): Promise<RunLine> {
  const redis = (await queue.getBackend().client) as unknown as Redis;
  const key = (k: string) => `${queue.opts.prefix ?? 'bull'}:${QUEUES.push}:${k}`;
  const first = (kind: string) => {
    for (let i = 0; i < chunks; i++) if (!done.has(`${kind}-${i}`)) return `${runId}-${kind}-${i}`;
    return null;
  };
  for (const id of [first('rows'), first('archives')]) {
    if (id === null || (await redis.exists(key(id))) === 0) continue;
    const ahead = await aheadOf(redis, key, id);
    if (ahead !== null) return { ahead, next: 'in line' };
    if ((await redis.zscore(key('delayed'), id)) !== null) return { ahead: 0, next: 'held back' };
    return { ahead: 0, next: 'running' };
  }
  return { ahead: 0, next: 'running' };
}
