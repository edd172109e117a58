// feed.missed at least once and once (issue 25): the deadline check records the event before it marks the feed
// overdue, so a worker killed between the two leaves the feed not overdue; the check redone (BullMQ gives the stalled
// job to another worker) records the same event again, which adds no second delivery.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { loadEndpoints } from '../../src/events/endpoints.ts';
import { feedKeys } from '../../src/redis-keys.ts';
import { EventRecorder } from '../../src/queue/events-queue.ts';
import { checkDeadline } from '../../src/queue/feed-deadlines.ts';
import { loadFeeds } from '../../src/queue/feeds.ts';
import { ownRedis, type OwnRedis } from '../helpers/redis-server.ts';
import { newSecret } from '../helpers/webhook-receiver.ts';

let redis: OwnRedis;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ps-ev-deadline-'));
  redis = await ownRedis(dir, { aof: false });
  await redis.start();
});
afterAll(async () => {
  await redis?.stop();
});

describe('feed.missed across a redone deadline check', () => {
  it('records one delivery when the check is redone after a kill between the event and the overdue mark', async () => {
    writeFileSync(
      join(dir, 'acme.yaml'),
      `schedule: "0 2 * * *"\nexpect: "0 7 * * *"\nsource: { dir: ${dir}, pattern: "*.csv" }\nmapping: m.yaml\n`,
    );
    const feeds = await loadFeeds(dir);
    const config = loadConfig({ WEBHOOK_URL: 'http://127.0.0.1:1/hook', WEBHOOK_SECRET: newSecret() });
    const conn = new Redis(redis.url, { maxRetriesPerRequest: null });
    const events = new Queue('events', { connection: conn, prefix: '{ps-ev-deadline}' });
    const recorder = new EventRecorder(events, await loadEndpoints(config));
    const last = feedKeys('{ps-ev-deadline}', 'acme').last;
    const expectedAt = Date.parse('2026-11-27T06:00:00.000Z');
    // The deadline job of that expected time, as BullMQ's job scheduler hands it to a worker (twice: a redo).
    const job = { data: { feed: 'acme', deadline: true }, opts: { prevMillis: expectedAt }, timestamp: expectedAt };
    const deliveries = async () =>
      (await events.getJobs(['waiting', 'delayed'])).filter((j) => j.data.event?.type === 'feed.missed');
    try {
      await conn.hset(last, { expectCheckedAt: '2026-11-26T06:00:00.000Z' });
      expect(await checkDeadline(job as unknown as Job, feeds, conn, '{ps-ev-deadline}', recorder)).toMatchObject({
        missed: true,
      });
      expect(await conn.hget(last, 'overdue')).toBe('1');
      // Killed after recording the event, before the marks were written: the redo finds the feed as it was.
      await conn.hset(last, { overdue: '0', expectCheckedAt: '2026-11-26T06:00:00.000Z' });
      await conn.hdel(last, 'overdueSince');
      expect(await checkDeadline(job as unknown as Job, feeds, conn, '{ps-ev-deadline}', recorder)).toMatchObject({
        missed: true,
      });
      const [one, ...more] = await deliveries();
      expect(more).toEqual([]);
      expect(one!.data.event.data).toMatchObject({ feed: 'acme', expectedAt: '2026-11-27T06:00:00.000Z' });
      expect(await conn.hmget(last, 'overdue', 'overdueSince')).toEqual(['1', '2026-11-27T06:00:00.000Z']);
      // The next expected time, still nothing: no second feed.missed while overdue.
      const next = { ...job, opts: { prevMillis: expectedAt + 86_400_000 }, timestamp: expectedAt + 86_400_000 };
      expect(await checkDeadline(next as unknown as Job, feeds, conn, '{ps-ev-deadline}', recorder)).toMatchObject({
        missed: false,
        overdue: true,
      });
      expect(await deliveries()).toHaveLength(1);
    } finally {
      await events.close();
      conn.disconnect();
    }
  });
});
