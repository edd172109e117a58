import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import { HttpError } from '../errors.ts';
import { logger } from '../logger.ts';
import { SingleFlight } from './single-flight.ts';

/** A reference record the API answered 404 for (cached for a short while like a value). */
export class ReferenceNotFound extends Error {
  constructor(readonly key: string) {
    super(`reference not found: ${key}`);
    this.name = 'ReferenceNotFound';
  }
}

/** Settings of the two-level cache. */
export interface ReferenceCacheOptions {
  /** Shared second level; null: in-process only. */
  redis: Redis | null;
  /** Key prefix in Redis (`<prefix>:ref:<key>`). */
  prefix: string;
  ttlMs: number;
  /** How long a 404 is remembered. */
  negativeTtlMs: number;
  lruMax: number;
  /** How long a process waits for another one holding the load lock before loading itself. */
  lockWaitMs?: number;
}

/** Cache counters for the report. */
export interface ReferenceCacheStats {
  loads: number;
  memoryHits: number;
  redisHits: number;
  notFound: number;
}

/** The reference cache: `get(key, load)`. */
export interface ReferenceCache {
  get<T>(key: string, load: () => Promise<T>): Promise<T>;
  readonly stats: ReferenceCacheStats;
}

type Entry = { v: unknown } | { nf: true };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Two levels — an in-process LRU in front of Redis shared by every worker — with TTLs, single-flight (one load per key in a
 * process, and across processes a short Redis lock so N workers make one request), 404s remembered for `negativeTtlMs`,
 * 5xx and connection errors never cached. When Redis fails the cache warns once and goes on with the in-process level.
 */
export function createReferenceCache(options: ReferenceCacheOptions): ReferenceCache {
  const lru = new LRUCache<string, Entry>({ max: options.lruMax, ttl: options.ttlMs });
  const flights = new SingleFlight<Entry>();
  const stats: ReferenceCacheStats = { loads: 0, memoryHits: 0, redisHits: 0, notFound: 0 };
  let redis = options.redis;
  const lockWait = options.lockWaitMs ?? 5000;
  const rkey = (k: string) => `${options.prefix}:ref:${k}`;

  const degrade = (err: unknown) => {
    if (!redis) return;
    logger.warn({ err: (err as Error).message }, 'reference cache: Redis failed, continuing in-process only');
    redis = null;
  };
  const fromRedis = async (k: string): Promise<Entry | undefined> => {
    if (!redis) return undefined;
    try {
      const raw = await redis.get(rkey(k));
      return raw === null ? undefined : (JSON.parse(raw) as Entry);
    } catch (err) {
      degrade(err);
      return undefined;
    }
  };
  const toRedis = async (k: string, e: Entry): Promise<void> => {
    if (!redis) return;
    try {
      await redis.set(rkey(k), JSON.stringify(e), 'PX', 'nf' in e ? options.negativeTtlMs : options.ttlMs);
    } catch (err) {
      degrade(err);
    }
  };
  const loadEntry = async (load: () => Promise<unknown>): Promise<Entry> => {
    stats.loads++;
    try {
      return { v: await load() };
    } catch (err) {
      if (err instanceof HttpError && err.status === 404) return { nf: true };
      throw err;
    }
  };

  const fill = async (k: string, load: () => Promise<unknown>): Promise<Entry> => {
    const shared = await fromRedis(k);
    if (shared) {
      stats.redisHits++;
      return shared;
    }
    let locked = false;
    if (redis) {
      try {
        locked = (await redis.set(`${rkey(k)}:lock`, String(process.pid), 'PX', lockWait, 'NX')) === 'OK';
      } catch (err) {
        degrade(err);
      }
      if (!locked && redis) {
        // Another worker is loading this key: wait for its value rather than asking the API too.
        for (const t0 = Date.now(); Date.now() - t0 < lockWait; ) {
          await sleep(25);
          const e = await fromRedis(k);
          if (e) {
            stats.redisHits++;
            return e;
          }
        }
      }
    }
    try {
      const e = await loadEntry(load);
      await toRedis(k, e);
      return e;
    } finally {
      if (locked && redis) await redis.del(`${rkey(k)}:lock`).catch(degrade);
    }
  };

  return {
    stats,
    async get<T>(key: string, load: () => Promise<T>): Promise<T> {
      let e = lru.get(key);
      if (e) stats.memoryHits++;
      else {
        e = await flights.run(key, () => fill(key, load));
        lru.set(key, e, { ttl: 'nf' in e ? options.negativeTtlMs : options.ttlMs });
      }
      if ('nf' in e) {
        stats.notFound++;
        throw new ReferenceNotFound(key);
      }
      return e.v as T;
    },
  };
}
