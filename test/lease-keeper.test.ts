// The keeper of queued runs' leases (src/lease/lease-keeper.ts), on the suite's Redis and a fake clock: it renews every
// registered lease on its timer while the run's import job lives, releases the lease of a run whose job ended, and
// forgets a lease another run took over — without waiting for a real TTL.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { acquireLease, holderOf, leaseName } from '../src/lease/lease.ts';
import { LeaseKeeper } from '../src/lease/lease-keeper.ts';
import { redisLeaseKeys } from '../src/lease/lease-redis.ts';
import { leaseStoreFor, type LeasePlace } from '../src/lease/lease-store.ts';
import { queuedLeasesKey } from '../src/redis-keys.ts';
import { FakeClock } from './helpers/clock.ts';
import { until } from './helpers/wait.ts';

const OWNER = '7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f';
const API = 'http://api.keeper.test';
const TTL = 30_000;
const redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: null });
const queues: Queue[] = [];
afterAll(async () => {
  for (const q of queues) {
    await q.obliterate({ force: true });
    await q.close();
  }
  redis.disconnect();
});

/** A keeper on a fake clock, its own key prefix and state directory, and a queued run's lease registered with it. */
async function keeperWithLease(jobAlive: boolean) {
  const clock = new FakeClock();
  const prefix = `keeper-${process.pid}-${Math.random().toString(36).slice(2)}`;
  const place: LeasePlace = { redis, prefix, stateDir: mkdtempSync(join(tmpdir(), 'ps-keeper-')), clock };
  const imports = new Queue('import', { connection: redis, prefix });
  queues.push(imports);
  const importJobId = 'job-1';
  if (jobAlive) await imports.add('import', {}, { jobId: importJobId });
  const holder = holderOf('run-k', 'queued', importJobId);
  const store = leaseStoreFor(place, OWNER, API);
  const lease = await acquireLease({ store, owner: OWNER, holder, ttlMs: TTL, clock });
  const keeper = new LeaseKeeper(redis, place, imports);
  await keeper.register({
    runId: 'run-k',
    owner: OWNER,
    api: API,
    grant: lease.grant,
    holder,
    ttlMs: TTL,
    importJobId,
  });
  const key = redisLeaseKeys(prefix, leaseName(OWNER, API)).lease;
  return { clock, keeper, key, registered: () => redis.hexists(queuedLeasesKey(prefix), 'run-k'), place };
}

describe('the lease keeper', () => {
  it("renews a live run's lease on its timer, every round", async () => {
    const { clock, keeper, key, registered } = await keeperWithLease(true);
    keeper.start(10_000);
    for (let i = 0; i < 3; i++) {
      // The lease about to run out in Redis: the keeper's next round gives it its whole TTL again.
      await redis.pexpire(key, 1_000);
      await clock.advance(10_000);
      await until(`renewal ${i + 1}`, async () => Number(await redis.pttl(key)) > 1_000);
    }
    expect(await registered()).toBe(1);
    await keeper.stop();
    expect(clock.pending).toBe(0);
  });

  it('releases the lease of a run whose import job ended, and forgets it', async () => {
    const { keeper, key, registered, place } = await keeperWithLease(false);
    await keeper.tick();
    expect(await redis.exists(key)).toBe(0);
    expect(await registered()).toBe(0);
    // Free for the next run at once, not after a TTL.
    const next = await leaseStoreFor(place, OWNER, API).acquire(holderOf('run-next', 'inline'), TTL, () => 'busy');
    expect('grant' in next).toBe(true);
  });

  it('forgets a lease another run took over, and does not take it back', async () => {
    const { clock, keeper, key, registered, place } = await keeperWithLease(true);
    // The run's lease ran out (Redis expired it, the lease file's time passed) and another run was granted it.
    await redis.del(key);
    clock.pause(TTL + 1);
    const other = await leaseStoreFor(place, OWNER, API).acquire(holderOf('run-other', 'inline'), TTL, () => 'busy');
    expect('grant' in other).toBe(true);
    await keeper.tick();
    expect(await registered()).toBe(0);
    expect(JSON.parse(String(await redis.hget(key, 'holder')))).toMatchObject({ runId: 'run-other' });
  });
});
