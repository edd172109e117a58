import { Redis } from 'ioredis';
import type { Config } from '../config.ts';
import { logger } from '../logger.ts';
import { redisState } from '../redis-state.ts';

/** A Redis connection for BullMQ (which needs `maxRetriesPerRequest: null` on blocking connections). */
export function queueConnection(config: Config): Redis {
  const redis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: null, enableReadyCheck: true });
  // ioredis reconnects by itself (a Redis restart), failing once per attempt: the process's Redis state tells the
  // outage once (redis-state.ts) instead of an unhandled error per attempt.
  return redisState.watch(redis, config.REDIS_URL);
}

/** The queue key prefix: one `{hash tag}` so every key of every queue lands on one Redis Cluster slot. */
export function queuePrefix(config: Config): string {
  return `{${config.QUEUE_PREFIX}}`;
}

/** Warns when Redis may evict keys: a queue on an evicting Redis can lose jobs. */
export async function warnOnEviction(redis: Redis): Promise<void> {
  try {
    const reply = (await redis.config('GET', 'maxmemory-policy')) as string[];
    const policy = reply[1];
    if (policy && policy !== 'noeviction') {
      logger.warn(
        { policy },
        `Redis maxmemory-policy is "${policy}": set it to "noeviction" or queued jobs may be evicted (docs/queue.md)`,
      );
    }
  } catch {
    // CONFIG may be disabled on managed Redis; nothing to check then.
  }
}

/** Gives a BullMQ queue (or QueueEvents) an error listener: its connection already reports an outage once (above), and
 * without a listener BullMQ prints every reconnection failure to the console. */
export function quietOnErrors<T extends { on(event: 'error', listener: (err: Error) => void): unknown }>(q: T): T {
  q.on('error', () => undefined);
  return q;
}
