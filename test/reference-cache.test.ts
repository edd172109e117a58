import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { HttpError } from '../src/errors.ts';
import { createReferenceCache, ReferenceNotFound } from '../src/api/reference-cache.ts';

const redis = new Redis(inject('redisUrl'), { lazyConnect: true });
const prefix = `ps-test-cache:${process.pid}:${Date.now()}`;
afterAll(async () => {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

const notFound = () => new HttpError('PS_ERR_HTTP_STATUS', { method: 'GET', url: 'http://x/v2/countries/1', status: 404 });
const unavailable = () => new HttpError('PS_ERR_HTTP_UNAVAILABLE', { method: 'GET', url: 'http://x/v2/lists/a', status: 503 });
const options = (extra = {}) => ({ redis: null, prefix, ttlMs: 60_000, negativeTtlMs: 60_000, lruMax: 100, ...extra });

describe('reference cache', () => {
  it('makes one load for 100 concurrent gets of a key', async () => {
    const cache = createReferenceCache(options());
    let loads = 0;
    const load = async () => {
      loads++;
      await new Promise((r) => setTimeout(r, 20));
      return ['x'];
    };
    const all = await Promise.all(Array.from({ length: 100 }, () => cache.get('list:a:en-us', load)));
    expect(loads).toBe(1);
    expect(all.every((v) => v[0] === 'x')).toBe(true);
  });

  it('expires values after the TTL', async () => {
    const cache = createReferenceCache(options({ ttlMs: 30 }));
    let loads = 0;
    await cache.get('k', async () => ++loads);
    await cache.get('k', async () => ++loads);
    await new Promise((r) => setTimeout(r, 60));
    await cache.get('k', async () => ++loads);
    expect(loads).toBe(2);
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
    await new Promise((r) => setTimeout(r, 80));
    await expect(cache.get('nf', load)).rejects.toBeInstanceOf(ReferenceNotFound);
    expect(loads).toBe(2);
  });

  it('never caches a 5xx: the next get tries again', async () => {
    const cache = createReferenceCache(options());
    let loads = 0;
    await expect(cache.get('e', async () => { loads++; throw unavailable(); })).rejects.toBeInstanceOf(HttpError);
    expect(await cache.get('e', async () => { loads++; return 'ok'; })).toBe('ok');
    expect(loads).toBe(2);
  });

  it('shares values through Redis: two workers, one load, even when they ask at once', async () => {
    await redis.connect().catch(() => undefined);
    const key = `shared:${Math.random()}`;
    const a = createReferenceCache(options({ redis }));
    const b = createReferenceCache(options({ redis: redis.duplicate() }));
    let loads = 0;
    const load = async () => {
      loads++;
      await new Promise((r) => setTimeout(r, 50));
      return 'v';
    };
    expect(await Promise.all([a.get(key, load), b.get(key, load)])).toEqual(['v', 'v']);
    expect(loads).toBe(1);
    const c = createReferenceCache(options({ redis }));
    expect(await c.get(key, load)).toBe('v');
    expect(loads).toBe(1);
    expect(c.stats.redisHits).toBe(1);
  });

  it('keeps working in-process when Redis is down', async () => {
    const dead = new Redis('redis://127.0.0.1:1', { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
    const cache = createReferenceCache(options({ redis: dead }));
    let loads = 0;
    expect(await cache.get('k', async () => ++loads)).toBe(1);
    expect(await cache.get('k', async () => ++loads)).toBe(1);
    dead.disconnect();
  });
});
