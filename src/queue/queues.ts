import { Queue, type JobSchedulerJson } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Config } from '../config.ts';
import { QUEUES, type QueueName } from './catalog.ts';
import { queueConnection, queuePrefix, quietOnErrors } from './connection.ts';
import { feedKeys } from '../redis-keys.ts';
import { answersWithin } from './redis-health.ts';
import { queueTelemetry } from '../tracing.ts';

/**
 * The BullMQ `Queue`s the server and the commands use, built here and nowhere else outside src/queue/: each helper
 * opens its own connection and its `close()` closes the queues, then the connection.
 */

/** One queue of the catalog on `connection`, under the queue prefix. */
export function openQueue(name: QueueName, connection: Redis, prefix: string): Queue {
  return new Queue(name, { connection, prefix, ...queueTelemetry() });
}

/**
 * Every queue of the catalog, for Bull Board (the console shows them read-only), on one connection of their own;
 * `answers(ms)`: whether that connection answers PING in time (the console's health check).
 */
export function boardQueues(config: Config): {
  queues: Queue[];
  answers(ms: number): Promise<boolean>;
  close(): Promise<void>;
} {
  const connection = queueConnection(config);
  const prefix = queuePrefix(config);
  const queues = Object.values(QUEUES).map((name) => quietOnErrors(openQueue(name, connection, prefix)));
  return {
    queues,
    answers: (ms) => answersWithin(connection, ms),
    async close() {
      await Promise.all(queues.map((q) => q.close()));
      connection.disconnect();
    },
  };
}

/** The feeds queue as the `feeds` commands read and feed it: schedulers, each feed's bookkeeping, a tick now. */
export interface FeedsQueue {
  /** The job schedulers the workers keep (one per feed), by scheduler id = feed id. */
  schedulers(): Promise<Map<string, JobSchedulerJson>>;
  /** A feed's last tick and last run (empty when it never ran). */
  last(feed: string): Promise<Record<string, string>>;
  /** Queues one tick of `feed` now (a worker picks it up); returns the job id. */
  tick(feed: string): Promise<string | undefined>;
  close(): Promise<void>;
}

/** Opens the feeds queue on a connection of its own. */
export function openFeedsQueue(config: Config): FeedsQueue {
  const connection = queueConnection(config);
  const prefix = queuePrefix(config);
  const queue = quietOnErrors(openQueue(QUEUES.feeds, connection, prefix));
  return {
    async schedulers() {
      const all = await queue.getJobSchedulers();
      return new Map(all.map((s) => [(s as { id?: string }).id ?? s.key, s]));
    },
    last: (feed) => connection.hgetall(feedKeys(prefix, feed).last),
    async tick(feed) {
      const job = await queue.add('feed-tick', { feed }, { removeOnComplete: { count: 1000 } });
      return job.id;
    },
    async close() {
      await queue.close();
      connection.disconnect();
    },
  };
}
