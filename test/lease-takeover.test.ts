// A grant knows whether it took the lease over: the holder of the grant before it, when that grant was never released
// (it ran out, or its process was gone) — what a run needs to look for the late creates of the run it took over from
// (docs/concurrency.md, "The window that remains"). Both stores: the lease file and Redis.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { holderOf, leaseName, type LeaseStore } from '../src/lease/lease.ts';
import { fileLeaseStore } from '../src/lease/lease-file.ts';
import { redisLeaseStore } from '../src/lease/lease-redis.ts';

const owner = '11111111-2222-4333-8444-555555555555';
const api = 'http://127.0.0.1:1/';
const redis = new Redis(inject('redisUrl'));
afterAll(() => redis.disconnect());

const stores: [string, () => LeaseStore][] = [
  ['lease file', () => fileLeaseStore(mkdtempSync(join(tmpdir(), 'ps-takeover-')), leaseName(owner, api), owner, api)],
  ['Redis', () => redisLeaseStore(redis, `takeover-${process.pid}-${Date.now()}`, leaseName(owner, api))],
];

describe('a grant says whom it took the lease over from', () => {
  for (const [name, make] of stores)
    it(`${name}: the holder of a grant never released, with its run directory; none after a release`, async () => {
      const store = make();
      const first = await store.acquire(holderOf('run-a', 'inline', undefined, '/reports/run-a'), 60_000, () => 'busy');
      expect(first).not.toHaveProperty('takenFrom');
      // Run a's process is gone: its grant is replaced, never released.
      const second = await store.acquire(
        holderOf('run-b', 'inline', undefined, '/reports/run-b'),
        60_000,
        () => 'replace',
      );
      expect(second).toMatchObject({ takenFrom: { runId: 'run-a', dir: '/reports/run-a' } });
      if (!('grant' in second)) throw new Error('not granted');
      await store.release(second.grant);
      const third = await store.acquire(holderOf('run-c', 'inline'), 60_000, () => 'busy');
      expect('grant' in third).toBe(true);
      expect(third).not.toHaveProperty('takenFrom');
    });
});
