import { createServer, type Server, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it, vi } from 'vitest';
import { HttpError } from '../src/errors.ts';
import { logger } from '../src/logger.ts';
import { createReferenceCache, ReferenceNotFound, type ReferenceCacheOptions } from '../src/api/reference-cache.ts';
import { SingleFlight } from '../src/api/single-flight.ts';
import { FakeClock, stepClock } from './helpers/clock.ts';

const redis = new Redis(inject('redisUrl'));
const prefix = `ps-test-cache:${process.pid}:${Date.now()}`;
const extra: Redis[] = [];
afterAll(async () => {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  for (const r of extra) r.disconnect();
  redis.disconnect();
});

const notFound = () =>
  new HttpError('PS_ERR_HTTP_STATUS', { method: 'GET', url: 'http://x/v2/countries/1', status: 404 });
const unavailable = () =>
  new HttpError('PS_ERR_HTTP_UNAVAILABLE', { method: 'GET', url: 'http://x/v2/lists/a', status: 503 });
const refused = () =>
  new HttpError('PS_ERR_HTTP_CONNECTION', { method: 'GET', url: 'http://x/v2/lists/a', status: null });
const options = (more: Partial<ReferenceCacheOptions> = {}): ReferenceCacheOptions => ({
  redis: null,
  prefix,
  ttlMs: 60_000,
  negativeTtlMs: 60_000,
  lruMax: 100,
  ...more,
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const uniqueKey = (name: string) => `${name}:${Math.random().toString(36).slice(2)}`;
/** A second connection, as another worker process would have. */
const worker = () => {
  const r = redis.duplicate();
  extra.push(r);
  return r;
};

/** A source that counts its loads, slow enough for concurrent gets to overlap. */
function counting<T>(answer: () => T | Promise<T>, delayMs = 20) {
  const source = {
    loads: 0,
    load: async () => {
      source.loads++;
      await sleep(delayMs);
      return answer();
    },
  };
  return source;
}

describe('single flight', () => {
  it('shares one run between concurrent callers, and a failure with all of them', async () => {
    const f = new SingleFlight<number>();
    let runs = 0;
    const ok = await Promise.all(
      Array.from({ length: 10 }, () =>
        f.run('a', async () => {
          runs++;
          await sleep(5);
          return 7;
        }),
      ),
    );
    expect(ok).toEqual(Array(10).fill(7));
    const failing = Array.from({ length: 3 }, () =>
      f.run('b', () => {
        runs++;
        throw new Error('boom');
      }),
    );
    for (const p of failing) await expect(p).rejects.toThrow('boom');
    expect(runs).toBe(2);
    expect(f.size).toBe(0);
  });
});

describe('reference cache, in process', () => {
  it('makes one load for 100 concurrent gets of a key', async () => {
    const cache = createReferenceCache(options());
    const src = counting(() => ['x']);
    const all = await Promise.all(Array.from({ length: 100 }, () => cache.get('list:a:en-us', src.load)));
    expect(src.loads).toBe(1);
    expect(all.every((v) => v[0] === 'x')).toBe(true);
    expect(cache.stats).toMatchObject({ loads: 1, memoryHits: 99 });
  });

  it('expires values after the TTL', async () => {
    const cache = createReferenceCache(options({ ttlMs: 30 }));
    let loads = 0;
    await cache.get('k', async () => ++loads);
    await cache.get('k', async () => ++loads);
    expect(loads).toBe(1);
    await sleep(60);
    expect(await cache.get('k', async () => ++loads)).toBe(2);
  });

  it('remembers a 404 for the negative TTL, then asks again', async () => {
    const cache = createReferenceCache(options({ negativeTtlMs: 40 }));
    let loads = 0;
    const load = async () => {
      loads++;
      throw notFound();
    };
    await expect(cache.get('nf', load)).rejects.toBeInstanceOf(ReferenceNotFound);
    await expect(cache.get('nf', load)).rejects.toBeInstanceOf(ReferenceNotFound);
    expect(loads).toBe(1);
    await sleep(80);
    await expect(cache.get('nf', load)).rejects.toBeInstanceOf(ReferenceNotFound);
    expect(loads).toBe(2);
    expect(cache.stats.notFound).toBe(3);
  });

  it('never caches a 5xx or a connection error: every waiter gets it, the next get tries again', async () => {
    const cache = createReferenceCache(options());
    const failing = counting(() => {
      throw unavailable();
    });
    const waiters = await Promise.allSettled(Array.from({ length: 5 }, () => cache.get('e', failing.load)));
    expect(
      waiters.every((w) => w.status === 'rejected' && w.reason instanceof HttpError && w.reason.status === 503),
    ).toBe(true);
    expect(failing.loads).toBe(1);
    await expect(
      cache.get('e', async () => {
        throw refused();
      }),
    ).rejects.toMatchObject({ status: null });
    expect(await cache.get('e', async () => 'ok')).toBe('ok');
  });

  it('keeps at most lruMax entries in process', async () => {
    const cache = createReferenceCache(options({ lruMax: 2 }));
    let loads = 0;
    for (const k of ['a', 'b', 'c', 'a']) await cache.get(k, async () => ++loads);
    expect(loads).toBe(4);
  });
});

describe('reference cache shared through Redis', () => {
  it('stores values as JSON under <prefix>:ref: with a PX TTL', async () => {
    const key = uniqueKey('list:trade-item-status:fr-fr');
    const cache = createReferenceCache(options({ redis, ttlMs: 30_000 }));
    await cache.get(key, async () => [{ id: '1', code: 'ACTIVE', name: 'Actif' }]);
    expect(JSON.parse((await redis.get(`${prefix}:ref:${key}`))!)).toEqual({
      v: [{ id: '1', code: 'ACTIVE', name: 'Actif' }],
    });
    const pttl = await redis.pttl(`${prefix}:ref:${key}`);
    expect(pttl).toBeGreaterThan(25_000);
    expect(pttl).toBeLessThanOrEqual(30_000);
    expect(await redis.exists(`${prefix}:ref:${key}:lock`)).toBe(0);
  });

  it('two workers asking at once make one load; a third finds it in Redis', async () => {
    const key = uniqueKey('shared');
    const a = createReferenceCache(options({ redis }));
    const b = createReferenceCache(options({ redis: worker() }));
    const src = counting(() => 'v', 50);
    expect(
      await Promise.all([a.get(key, src.load), b.get(key, src.load), a.get(key, src.load), b.get(key, src.load)]),
    ).toEqual(['v', 'v', 'v', 'v']);
    expect(src.loads).toBe(1);
    const c = createReferenceCache(options({ redis: worker() }));
    expect(await c.get(key, src.load)).toBe('v');
    expect(src.loads).toBe(1);
    expect(c.stats).toMatchObject({ loads: 0, redisHits: 1 });
  });

  it('shares a 404 for the negative TTL only', async () => {
    const key = uniqueKey('lookup:countries');
    const a = createReferenceCache(options({ redis, negativeTtlMs: 200 }));
    const src = counting(() => {
      throw notFound();
    }, 0);
    await expect(a.get(key, src.load)).rejects.toBeInstanceOf(ReferenceNotFound);
    const pttl = await redis.pttl(`${prefix}:ref:${key}`);
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(200);
    await expect(
      createReferenceCache(options({ redis: worker(), negativeTtlMs: 200 })).get(key, src.load),
    ).rejects.toBeInstanceOf(ReferenceNotFound);
    expect(src.loads).toBe(1);
    await sleep(250);
    expect(await createReferenceCache(options({ redis })).get(key, async () => 'now it exists')).toBe('now it exists');
  });

  it('never shares a 5xx: when the lock holder fails, a waiting worker loads at once instead of waiting out the lock', async () => {
    const key = uniqueKey('flaky');
    const a = createReferenceCache(options({ redis, lockWaitMs: 60_000 }));
    const b = createReferenceCache(options({ redis: worker(), lockWaitMs: 60_000 }));
    let calls = 0;
    const load = async () => {
      calls++;
      await sleep(30);
      if (calls === 1) throw unavailable();
      return 'second try';
    };
    const [ra, rb] = await Promise.allSettled([a.get(key, load), b.get(key, load)]);
    expect([ra.status, rb.status].sort()).toEqual(['fulfilled', 'rejected']);
    expect(calls).toBe(2);
    expect(await redis.get(`${prefix}:ref:${key}`)).toBe(JSON.stringify({ v: 'second try' }));
  });

  it('loads by itself when another worker holds the lock too long (lockWaitMs by its clock)', async () => {
    const key = uniqueKey('stuck');
    await redis.set(`${prefix}:ref:${key}:lock`, 'a crashed worker', 'PX', 60_000);
    const clock = new FakeClock();
    const cache = createReferenceCache(options({ redis, lockWaitMs: 5000, pollMs: 1000, clock }));
    let got: unknown;
    void cache.get(key, async () => 'mine').then((v) => (got = v));
    // A look at the key each second of the clock; the fifth second's look is the last, then it loads.
    expect(await stepClock(clock, 1000, () => got !== undefined)).toBe(5);
    expect(got).toBe('mine');
    // The other worker's lock is not ours to delete.
    expect(await redis.get(`${prefix}:ref:${key}:lock`)).toBe('a crashed worker');
  });
});

describe('reference cache without a working Redis', () => {
  it('works in process when Redis refuses connections, with one warning', async () => {
    const warn = vi.spyOn(logger, 'warn').mockImplementation(() => undefined);
    try {
      const dead = new Redis('redis://127.0.0.1:1', {
        lazyConnect: true,
        maxRetriesPerRequest: 0,
        enableOfflineQueue: false,
        retryStrategy: () => null,
      });
      dead.on('error', () => undefined);
      extra.push(dead);
      const cache = createReferenceCache(options({ redis: dead }));
      const src = counting(() => 'v', 0);
      const all = await Promise.all(['a', 'b', 'a', 'c'].map((k) => cache.get(k, src.load)));
      expect(all).toEqual(['v', 'v', 'v', 'v']);
      expect(src.loads).toBe(3);
      expect(warn.mock.calls.filter((c) => String(c[1]).includes('reference cache'))).toHaveLength(1);
    } finally {
      warn.mockRestore();
    }
  });

  it('does not hang on a Redis that accepts connections and never answers', async () => {
    const sockets: Socket[] = [];
    const mute: Server = createServer((s) => void sockets.push(s));
    await new Promise<void>((r) => mute.listen(0, '127.0.0.1', r));
    const port = (mute.address() as { port: number }).port;
    // Default client options (offline queue, retries), as a BullMQ-style connection would have.
    const silent = new Redis({ port, host: '127.0.0.1', lazyConnect: true });
    silent.on('error', () => undefined);
    const warn = vi.spyOn(logger, 'warn').mockImplementation(() => undefined);
    try {
      const clock = new FakeClock();
      const cache = createReferenceCache(options({ redis: silent, redisTimeoutMs: 100, clock }));
      let loads = 0;
      expect(await cache.get('k', async () => ++loads)).toBe(1);
      expect(await cache.get('j', async () => ++loads)).toBe(2);
      expect(cache.stats.redisErrors).toBe(1);
      // Redis is left alone for redisRetryMs of the cache's clock, then asked again.
      await clock.advance(30_000);
      expect(await cache.get('i', async () => ++loads)).toBe(3);
      expect(cache.stats.redisErrors).toBe(2);
    } finally {
      warn.mockRestore();
      silent.disconnect();
      for (const s of sockets) s.destroy();
      await new Promise((r) => mute.close(r));
    }
  });
});
