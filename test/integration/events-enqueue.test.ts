// run.queued at least once (issue 25): an enqueue that died after adding its job and before recording the event (here:
// a client without the endpoint added it) leaves the job without its run.queued; enqueuing it again records it, and
// recording it once more adds nothing (one event id per job and queued time).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { makeEvent } from '../../src/events/catalog.ts';
import { queuePrefix } from '../../src/queue/connection.ts';
import { importQueueClient } from '../../src/queue/enqueue.ts';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { ownRedis, type OwnRedis } from '../helpers/redis-server.ts';
import { writeProductSheet } from '../helpers/sheets.ts';
import { newSecret } from '../helpers/webhook-receiver.ts';

let redis: OwnRedis;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ps-ev-enqueue-'));
  redis = await ownRedis(dir, { aof: false });
  await redis.start();
});
afterAll(async () => {
  await redis?.stop();
});

describe('run.queued', () => {
  it('is recorded by an enqueue that finds its job already added without it, once', async () => {
    const env = {
      PRODUCT_API_URL: 'http://127.0.0.1:1',
      REFERENCE_API_URL: 'http://127.0.0.1:1',
      API_TOKEN: 'unused',
      REDIS_URL: redis.url,
      QUEUE_PREFIX: 'ps-ev-enqueue',
      REPORT_DIR: join(dir, 'reports'),
      UPLOAD_DIR: join(dir, 'uploads'),
      LOG_LEVEL: 'silent',
    };
    const withEndpoint = loadConfig({ ...env, WEBHOOK_URL: 'http://127.0.0.1:1/hook', WEBHOOK_SECRET: newSecret() });
    const { file, mapping } = writeProductSheet(dir, 1, { owner: DEMO_COMPANY_ID });
    const request = { request: { file, mapping }, origin: 'cli', step: 'prepare' } as const;
    const conn = new Redis(redis.url, { maxRetriesPerRequest: null });
    const events = new Queue('events', { connection: conn, prefix: queuePrefix(withEndpoint) });
    const recorded = async (id: string) =>
      (await events.getJobs(['waiting', 'delayed', 'active', 'completed', 'failed'])).filter((j) =>
        j.id?.startsWith(`${id}-`),
      ).length;
    const silent = importQueueClient(loadConfig(env));
    const client = importQueueClient(withEndpoint);
    try {
      // The first attempt: the job is added, its event is not recorded.
      const first = await silent.enqueue(request);
      expect(first.existed).toBe(false);
      const job = (await client.queue.getJob(first.jobId))!;
      const id = makeEvent('run.queued', `${job.id}@${job.timestamp}`, {}).id;
      expect(await recorded(id)).toBe(0);

      // Enqueued again: the same job, and now its run.queued.
      const again = await client.enqueue(request);
      expect(again).toEqual({ jobId: first.jobId, existed: true });
      expect(await recorded(id)).toBe(1);
      const [delivery] = (await events.getJobs(['waiting', 'delayed'])).filter((j) => j.id?.startsWith(`${id}-`));
      expect(delivery!.data.event).toMatchObject({ type: 'run.queued', data: { jobId: first.jobId, origin: 'cli' } });

      // Once more: nothing new.
      await client.enqueue(request);
      expect(await recorded(id)).toBe(1);
    } finally {
      await silent.close();
      await client.close();
      await events.close();
      conn.disconnect();
    }
  }, 30_000);
});
