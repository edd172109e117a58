// The events of a feed tick that queues no import (issue 25): a source that cannot be reached is a run that could not
// start (run.failed), on a tick of the schedule and on the follow-up tick an import queues alike; a tick of the
// schedule with nothing new says so (feed.no_new_file), the follow-up tick after an import does not. Real worker, real
// Redis, a receiver that verifies signatures with `standardwebhooks`.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { makeEvent } from '../../src/events/catalog.ts';
import { queuePrefix } from '../../src/queue/connection.ts';
import { feedKeys } from '../../src/redis-keys.ts';
import { upsertDeadlines } from '../../src/queue/feed-deadlines.ts';
import { loadFeeds } from '../../src/queue/feeds.ts';
import { ProcessMetrics } from '../../src/metrics/metrics.ts';
import { startWorkers, type WorkerSet } from '../../src/queue/workers.ts';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.ts';
import { ownRedis, type OwnRedis } from '../helpers/redis-server.ts';
import { writeProductSheet } from '../helpers/sheets.ts';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';
import { apiEnv } from '../helpers/env.ts';

let sandbox: RunningSandbox;
let redis: OwnRedis;
let receiver: Receiver;
let workers: WorkerSet;
let conn: Redis;
let feedsQueue: Queue;
let eventsQueue: Queue;
let dir: string;
const metrics = new ProcessMetrics();

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
  dir = mkdtempSync(join(tmpdir(), 'ps-ev-ticks-'));
  redis = await ownRedis(dir, { aof: false });
  await redis.start();
  receiver = await startReceiver();
  const { mapping } = writeProductSheet(dir, 1, { owner: DEMO_COMPANY_ID, file: 'unused.csv' });
  const jobs = join(dir, 'jobs');
  mkdirSync(jobs);
  mkdirSync(join(dir, 'quiet'));
  // Schedules that do not fire during the test: every tick here is queued by the test.
  const feed = (id: string, source: string) =>
    writeFileSync(join(jobs, `${id}.yaml`), `schedule: "0 2 * * *"\nsource: ${source}\nmapping: ${mapping}\n`);
  // A drop folder that cannot be listed (a file stands where it should be; a folder merely missing lists nothing).
  writeFileSync(join(dir, 'not-a-folder'), '');
  feed('unlistable', `{ dir: ${join(dir, 'not-a-folder')}, pattern: "*.csv", settleSeconds: 0 }`);
  feed('down', `{ https: { url: "https://localhost:1/feed.csv" } }`);
  feed('quiet', `{ dir: ${join(dir, 'quiet')}, pattern: "*.csv", settleSeconds: 0 }`);
  // A drop folder holding a file the input gate refuses (a mapped column is missing).
  mkdirSync(join(dir, 'refusing'));
  writeFileSync(join(dir, 'refusing', 'acme-1.csv'), 'Code;Libellé\n1;x\n');
  feed('refusing', `{ dir: ${join(dir, 'refusing')}, pattern: "*.csv", settleSeconds: 0 }`);
  const config = loadConfig({
    ...apiEnv(sandbox.url),
    REDIS_URL: redis.url,
    QUEUE_PREFIX: 'ps-ev-ticks',
    REPORT_DIR: join(dir, 'reports'),
    UPLOAD_DIR: join(dir, 'uploads'),
    LOG_LEVEL: 'silent',
    SOURCE_ALLOW_HOSTS: 'localhost',
    WEBHOOK_URL: receiver.url,
    WEBHOOK_SECRET: receiver.secret,
    WEBHOOK_RETRY_BASE_MS: '50',
  });
  workers = await startWorkers(config, { jobsDir: jobs, metrics });
  conn = new Redis(redis.url, { maxRetriesPerRequest: null });
  feedsQueue = new Queue('feeds', { connection: conn, prefix: queuePrefix(config) });
  eventsQueue = new Queue('events', { connection: conn, prefix: queuePrefix(config) });
});
afterAll(async () => {
  await feedsQueue?.close();
  await eventsQueue?.close();
  conn?.disconnect();
  await workers?.close();
  await receiver?.close();
  await redis?.stop();
  await sandbox?.close();
});

/** Queues one tick of `feed` (a follow-up tick as an import queues it, or one as the schedule does), waits for it. */
async function tick(feed: string, followUp: boolean): Promise<string> {
  const job = await feedsQueue.add('feed-tick', followUp ? { feed, followUp: true } : { feed });
  for (let i = 0; i < 400; i++) {
    const state = await feedsQueue.getJobState(job.id!);
    if (state === 'completed') return job.id!;
    if (state === 'failed') throw new Error(`tick ${job.id} of ${feed} failed`);
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`tick ${job.id} of ${feed} did not complete`);
}

/** The delivery jobs recorded in the events queue for event `id` (one per endpoint that wants it). */
async function recorded(id: string): Promise<number> {
  const jobs = await eventsQueue.getJobs(['waiting', 'active', 'delayed', 'completed', 'failed', 'prioritized']);
  return jobs.filter((j) => j.id?.startsWith(`${id}-`)).length;
}

describe('events of feed ticks that queue no import', () => {
  for (const [feed, source, error] of [
    ['unlistable', 'dir:', /not-a-folder cannot be listed \(ENOTDIR\)/],
    ['down', 'https://localhost:1/feed.csv', /localhost/],
  ] as const) {
    it(`a source that cannot be reached (${feed}): run.failed, signed, on a scheduled and on a follow-up tick`, async () => {
      for (const followUp of [false, true]) {
        const tickId = await tick(feed, followUp);
        const id = makeEvent('run.failed', `${feed}@${tickId}`, {}).id;
        await receiver.waitFor((r) => r.accepted().has(id));
        const got = receiver.accepted().get(id)!;
        expect(got).toMatchObject({ type: 'run.failed', verified: true });
        expect(got.data).toMatchObject({
          jobId: tickId,
          feed,
          mapping: 'products.yaml',
          error: { code: 'PS_ERR_SOURCE_UNAVAILABLE' },
        });
        // `file` is the source's label: what could not be read.
        expect(String(got.data.file)).toMatch(new RegExp(`^${source.replace(/[.*/]/g, '\\$&')}`));
        expect((got.data.error as { message: string }).message).toMatch(error);
        // The feed's hash says the same (feeds list, the console).
        expect(await conn.hget(`{ps-ev-ticks}:feed:${feed}:last`, 'lastTickError')).toMatch(error);
      }
      // Counted on /metrics too (no run started, so no run counter has it): once per tick.
      const counted = (await metrics.registry.getSingleMetric('product_sync_feed_source_errors_total')!.get()).values;
      expect(counted.find((v) => v.labels.feed === feed)?.value).toBe(2);
    }, 30_000);
  }

  it('nothing new: feed.no_new_file on a scheduled tick, nothing on the follow-up tick an import queues', async () => {
    // The drop folder is empty.
    const scheduled = await tick('quiet', false);
    const id = makeEvent('feed.no_new_file', `quiet@${scheduled}`, {}).id;
    await receiver.waitFor((r) => r.accepted().has(id));
    expect(receiver.accepted().get(id)).toMatchObject({
      type: 'feed.no_new_file',
      verified: true,
      data: { feed: 'quiet', file: null, reason: expect.stringMatching(/^no file matches/) },
    });
    expect(await recorded(id)).toBe(1);

    // A follow-up tick records its events before it completes: none was recorded for it.
    const followUp = await tick('quiet', true);
    expect(await recorded(makeEvent('feed.no_new_file', `quiet@${followUp}`, {}).id)).toBe(0);
    expect(await conn.hget('{ps-ev-ticks}:feed:quiet:last', 'tick')).toMatch(/^no file matches/);
    const counted = (await metrics.registry.getSingleMetric('product_sync_feed_source_errors_total')!.get()).values;
    expect(counted.find((v) => v.labels.feed === 'quiet')).toBeUndefined();
  }, 30_000);

  it('a refused file: feed.no_new_file names it, on the tick that refuses it and on the next one', async () => {
    for (let i = 0; i < 2; i++) {
      const scheduled = await tick('refusing', false);
      const id = makeEvent('feed.no_new_file', `refusing@${scheduled}`, {}).id;
      await receiver.waitFor((r) => r.accepted().has(id));
      expect(receiver.accepted().get(id)).toMatchObject({
        type: 'feed.no_new_file',
        verified: true,
        data: { feed: 'refusing', file: 'acme-1.csv', reason: expect.stringMatching(/refused/) },
      });
    }
  }, 30_000);

  it('a feed whose `expect:` was removed while it was overdue is overdue no more once the workers load it', async () => {
    const last = feedKeys('{ps-ev-ticks}', 'quiet').last;
    await conn.hset(last, { overdue: '1', overdueSince: '2026-01-02T05:00:00.000Z', expectCheckedAt: 'x' });
    // What every worker does at start with its jobs/ (quiet.yaml has no expect).
    await upsertDeadlines(eventsQueue, conn, '{ps-ev-ticks}', await loadFeeds(join(dir, 'jobs')));
    expect(await conn.hmget(last, 'overdue', 'overdueSince', 'expectCheckedAt')).toEqual([null, null, null]);
    expect(await conn.hget(last, 'tick')).toMatch(/^no file matches/);
  });
});
