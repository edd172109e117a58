// A BullMQ job's lock as a fence (src/lease/job-lock.ts), on a real job of the suite's Redis and a fake clock: a worker
// paused past its lock lets no write out until it extended the lock again; a lock another worker took is lost for good.
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { jobLockFence } from '../src/lease/job-lock.ts';
import { FakeClock } from './helpers/clock.ts';
import { until } from './helpers/wait.ts';

const LOCK_MS = 30_000;
const prefix = `job-lock-${process.pid}`;
const connection = new Redis(inject('redisUrl'), { maxRetriesPerRequest: null });
const queue = new Queue('q', { connection, prefix });
const worker = new Worker('q', null, { connection, prefix, lockDuration: LOCK_MS, autorun: false });
afterAll(async () => {
  await worker.close();
  await queue.obliterate({ force: true });
  await queue.close();
  connection.disconnect();
});

/** A job taken by the test's worker, under `token`. */
async function takeJob(token: string) {
  await queue.add('x', {});
  const job = await worker.getNextJob(token);
  if (!job) throw new Error('no job');
  return job;
}

describe('the job-lock fence', () => {
  it('refuses a write after a pause past the lock, with no I/O; ready() extends it again while it is still ours', async () => {
    const clock = new FakeClock();
    const fence = await jobLockFence(await takeJob('t-1'), 't-1', LOCK_MS, clock);
    expect(() => fence.check()).not.toThrow();
    clock.pause(LOCK_MS);
    expect(() => fence.check()).toThrow(/lease lost: the lock of job .* was not extended within 30 s/);
    await fence.ready();
    expect(() => fence.check()).not.toThrow();
    expect(fence.lost).toBeNull();
    fence.stop();
    expect(clock.pending).toBe(0);
  });

  it('a lock another worker took is lost for good: ready() and check() say so', async () => {
    const clock = new FakeClock();
    const job = await takeJob('t-2');
    const fence = await jobLockFence(job, 't-2', LOCK_MS, clock);
    // Another worker got the job (the stalled-job check handed it out again): the lock names its token now.
    await connection.set(`${prefix}:q:${job.id}:lock`, 'another-worker', 'PX', LOCK_MS);
    clock.pause(LOCK_MS * 0.7);
    await expect(fence.ready()).rejects.toMatchObject({
      code: 'PS_ERR_LEASE_LOST',
      message: expect.stringContaining("no longer this worker's"),
    });
    expect(() => fence.check()).toThrow(/no longer this worker's/);
    fence.stop();
  });

  it('extends the lock every third of it', async () => {
    const clock = new FakeClock();
    const job = await takeJob('t-3');
    const fence = await jobLockFence(job, 't-3', LOCK_MS, clock);
    for (let i = 0; i < 4; i++) {
      await connection.pexpire(`${prefix}:q:${job.id}:lock`, 1_000);
      await clock.advance(LOCK_MS / 3);
      await until(
        `extension ${i + 1}`,
        async () => Number(await connection.pttl(`${prefix}:q:${job.id}:lock`)) > 1_000,
      );
    }
    expect(() => fence.check()).not.toThrow();
    fence.stop();
  });
});
