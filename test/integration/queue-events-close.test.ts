// Why `enqueue --wait` could hang after a Redis restart without persistence (issue 33, deliver 6): closing the
// QueueEvents whose connection waits to reconnect. ioredis never emits 'end' for a connection disconnected in that
// state, and BullMQ's close waits for it; closeQueueEvents does not.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { closeQueueEvents } from '../../src/queue/enqueue.ts';
import { ownRedis } from '../helpers/redis-server.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A QueueEvents on its own connection, ready, then Redis stopped: the connection waits to reconnect. */
async function eventsOfStoppedRedis(): Promise<{ events: QueueEvents; conn: Redis; stop: () => Promise<void> }> {
  const redis = await ownRedis(mkdtempSync(join(tmpdir(), 'ps-qe-close-')), { aof: false });
  await redis.start();
  // Slow reconnect attempts, as after a few failed ones: the connection spends its time in `reconnecting`.
  const conn = new Redis(redis.url, { maxRetriesPerRequest: null, retryStrategy: () => 5000 });
  conn.on('error', () => undefined);
  const events = new QueueEvents('import', { connection: conn, prefix: '{ps-qe-close}' });
  events.on('error', () => undefined);
  await events.waitUntilReady();
  await redis.stop('SIGKILL');
  for (let i = 0; i < 500 && conn.status !== 'reconnecting'; i++) await sleep(10);
  expect(conn.status).toBe('reconnecting');
  return { events, conn, stop: () => redis.stop() };
}

describe('closing the events of a queue whose Redis went away', () => {
  it("BullMQ's own close waits for ever on a connection waiting to reconnect (the cause)", async () => {
    const { events, conn, stop } = await eventsOfStoppedRedis();
    try {
      const closed = await Promise.race([events.close().then(() => true), sleep(3000).then(() => false)]);
      expect(closed).toBe(false);
    } finally {
      conn.disconnect();
      await stop();
    }
  }, 20_000);

  it('closeQueueEvents returns at once and leaves nothing running', async () => {
    const { events, conn, stop } = await eventsOfStoppedRedis();
    try {
      const t0 = Date.now();
      await closeQueueEvents(events, conn);
      expect(Date.now() - t0).toBeLessThan(1000);
    } finally {
      await stop();
    }
  }, 20_000);
});
