import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import { realClock, type Clock } from '../clock.ts';
import { HttpError } from '../errors.ts';
import { logger } from '../logger.ts';
import { referenceKey } from '../redis-keys.ts';
import { SingleFlight } from './single-flight.ts';

/** A reference record the API answered 404 for; remembered for `negativeTtlMs` like a value, and thrown by `get`. */
export class ReferenceNotFound extends Error {
  constructor(readonly key: string) {
    super(`reference not found: ${key}`);
    this.name = 'ReferenceNotFound';
  }
}

/** Settings of the two-level cache. */
export interface ReferenceCacheOptions {
  /** Shared second level; null or absent: in-process only. */
  redis?: Redis | null;
  /** Key prefix in Redis (`<prefix>:ref:<key>`). */
  prefix: string;
  /** How long a value lives, in process and in Redis. */
  ttlMs: number;
  /** How long a 404 is remembered. */
  negativeTtlMs: number;
  /** Entries kept in process. */
  lruMax: number;
  /** How long a process waits for another one holding the load lock before loading itself (default 5 s). */
  lockWaitMs?: number;
  /** Life of the load lock in Redis, so a crashed holder never blocks the key for long (default 10 s). */
  lockTtlMs?: number;
  /** Pause between two looks at a key another process is loading (default 25 ms). */
  pollMs?: number;
  /** A Redis command slower than this counts as Redis being down (default 1 s). */
  redisTimeoutMs?: number;
  /** After a Redis failure, Redis is left alone this long before it is tried again (default 30 s). */
  redisRetryMs?: number;
  /** What the lock wait, its polls and the pause after a Redis failure are timed by (the real clocks by default). */
  clock?: Clock;
}

/** Cache counters for the report: `loads` are requests made; hits were answered without one. */
export interface ReferenceCacheStats {
  loads: number;
  /** Answered in process: from the LRU, or by joining a load already in flight. */
  memoryHits: number;
  redisHits: number;
  /** Gets answered "not found" (from a 404 now or remembered). */
  notFound: number;
  /** Redis failures (each outage warns once). */
  redisErrors: number;
}

/** The reference cache: `get(key, load)`. */
export interface ReferenceCache {
  /**
   * The value of `key`, loaded at most once per TTL across the processes sharing Redis; a 404 throws {@link
   * ReferenceNotFound}.
   */
  get<T>(key: string, load: () => Promise<T>): Promise<T>;
  readonly stats: ReferenceCacheStats;
}

type Entry = { v: unknown } | { nf: true };

const FAILED = Symbol('redis failed');
type Failed = typeof FAILED;

// Deletes the lock only if it is still ours: a holder slower than the lock's life must not free another holder's lock.
const RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

/** The cache settings of a run's label lookups (the process-wide cache, or a run's own). */
export const RUN_CACHE_SETTINGS = { ttlMs: 10 * 60_000, negativeTtlMs: 30_000, lruMax: 10_000 } as const;

/**
 * Two levels — an in-process LRU in front of Redis shared by every worker — with TTLs on both, single-flight (one load
 * per key in a process, and across processes a short Redis lock, SET NX PX, so N workers make one request), 404s
 * remembered for `negativeTtlMs`, 5xx and connection errors never cached. When Redis fails or is slow the cache warns
 * once per outage and goes on with the in-process level, trying Redis again after `redisRetryMs`.
 */
export function createReferenceCache(options: ReferenceCacheOptions): ReferenceCache {
  const ttl = (e: Entry) => ('nf' in e ? options.negativeTtlMs : options.ttlMs);
  const lru = new LRUCache<string, Entry>({ max: options.lruMax, ttl: options.ttlMs });
  const flights = new SingleFlight<Entry>();
  const stats: ReferenceCacheStats = { loads: 0, memoryHits: 0, redisHits: 0, notFound: 0, redisErrors: 0 };
  const redis = options.redis ?? null;
  const lockWaitMs = options.lockWaitMs ?? 5000;
  const lockTtlMs = options.lockTtlMs ?? 10_000;
  const pollMs = options.pollMs ?? 25;
  const timeoutMs = options.redisTimeoutMs ?? 1000;
  const retryMs = options.redisRetryMs ?? 30_000;
  const clock = options.clock ?? realClock;
  const rkey = (k: string) => referenceKey(options.prefix, k);
  let downUntil = 0;
  let down = false;

  /** One Redis call, bounded in time; any failure marks Redis down for `retryMs` (one warning per outage). */
  const call = async <R>(op: (c: Redis) => Promise<R>): Promise<R | Failed> => {
    if (!redis || clock.mono() < downUntil) return FAILED;
    let timer: NodeJS.Timeout | undefined;
    const pending = op(redis);
    pending.catch(() => undefined);
    try {
      const out = await Promise.race([
        pending,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`Redis did not answer within ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
      if (down) {
        down = false;
        logger.info('reference cache: Redis answers again, sharing resumes');
      }
      return out;
    } catch (err) {
      stats.redisErrors++;
      downUntil = clock.mono() + retryMs;
      if (!down) {
        down = true;
        logger.warn({ err: (err as Error).message }, 'reference cache: Redis failed, continuing in-process only');
      }
      return FAILED;
    } finally {
      clearTimeout(timer);
    }
  };

  /** The shared entry and its remaining life, undefined when absent or unreadable. */
  const readShared = async (k: string): Promise<{ e: Entry; pttl: number } | undefined | Failed> => {
    const res = await call((c) => c.pipeline().get(rkey(k)).pttl(rkey(k)).exec());
    if (res === FAILED) return FAILED;
    const [[getErr, raw] = [], [, pttl] = []] = res ?? [];
    if (getErr || typeof raw !== 'string') return undefined;
    try {
      return { e: JSON.parse(raw) as Entry, pttl: typeof pttl === 'number' ? pttl : -1 };
    } catch {
      return undefined;
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

  /** The entry of `k` from Redis, or loaded by this process under the Redis lock (or without it after `lockWaitMs`). */
  const fill = async (k: string, load: () => Promise<unknown>): Promise<{ e: Entry; ttlMs: number }> => {
    const lockKey = `${rkey(k)}:lock`;
    const token = randomUUID();
    const deadline = clock.mono() + lockWaitMs;
    let locked = false;
    for (;;) {
      const shared = await readShared(k);
      if (shared === FAILED) break;
      if (shared) {
        stats.redisHits++;
        return { e: shared.e, ttlMs: shared.pttl > 0 ? Math.min(shared.pttl, ttl(shared.e)) : ttl(shared.e) };
      }
      const got = await call((c) => c.set(lockKey, token, 'PX', lockTtlMs, 'NX'));
      if (got === FAILED) break;
      if (got === 'OK') {
        locked = true;
        // The previous holder may have written the value and released the lock between our GET and our SET NX.
        const late = await readShared(k);
        if (late && late !== FAILED) {
          await call((c) => c.eval(RELEASE, 1, lockKey, token));
          stats.redisHits++;
          return { e: late.e, ttlMs: late.pttl > 0 ? Math.min(late.pttl, ttl(late.e)) : ttl(late.e) };
        }
        break;
      }
      // Another worker is loading this key: wait for its value rather than asking the API too, but not forever.
      if (clock.mono() >= deadline) break;
      await clock.sleep(pollMs);
    }
    try {
      const e = await loadEntry(load);
      await call((c) => c.set(rkey(k), JSON.stringify(e), 'PX', ttl(e)));
      return { e, ttlMs: ttl(e) };
    } finally {
      if (locked) await call((c) => c.eval(RELEASE, 1, lockKey, token));
    }
  };

  return {
    stats,
    async get<T>(key: string, load: () => Promise<T>): Promise<T> {
      let e = lru.get(key);
      // A get that joins another's load in flight is answered without a request too.
      if (e || flights.has(key)) stats.memoryHits++;
      if (!e) {
        e = await flights.run(key, async () => {
          const filled = await fill(key, load);
          // Set inside the flight, so a get arriving after the flight ends always finds the entry in process.
          lru.set(key, filled.e, { ttl: filled.ttlMs });
          return filled.e;
        });
      }
      if ('nf' in e) {
        stats.notFound++;
        throw new ReferenceNotFound(key);
      }
      return e.v as T;
    },
  };
}
