/**
 * Where the owner lease of a run lives: Redis when the process has one (REDIS_URL), else the state directory's lease
 * file.
 */
import type { Redis } from 'ioredis';
import type { Clock } from '../clock.ts';
import { ProductSyncError } from '../errors.ts';
import {
  describeHolder,
  holderGone,
  leaseName,
  type BusyVerdict,
  type LeaseHolder,
  type LeaseStore,
  type RenewResult,
} from './lease.ts';
import { fileLeaseStore, type FileLeaseStore } from './lease-file.ts';
import { redisLeaseStore } from './lease-redis.ts';

/** What picks the store of a lease. */
export interface LeasePlace {
  redis?: Redis | null;
  /** QUEUE_PREFIX: the Redis keys' prefix. */
  prefix: string;
  /** STATE_DIR: where lease files live without Redis. */
  stateDir: string;
  /** The clocks of the lease file's expiries and the keeper's timer (the real ones by default). */
  clock?: Clock;
}

/**
 * The store of the lease of (owner, api). With Redis, the machine's lease file is held too, for the same grant: an
 * inline run of this machine without REDIS_URL sees every writer of the owner (docs/concurrency.md).
 */
export function leaseStoreFor(place: LeasePlace, owner: string, api: string): LeaseStore {
  const name = leaseName(owner, api);
  const file = fileLeaseStore(place.stateDir, name, owner, api, place.clock);
  return place.redis ? withMachineFile(redisLeaseStore(place.redis, place.prefix, name), file) : file;
}

/**
 * The Redis lease, and with it the lease file of this machine: granted both or neither (a busy file frees the new
 * Redis grant again), renewed both — a renewal whose file another holder took meanwhile is not a renewal (an error,
 * not a verdict: the holder stops sending until it can renew) — and released both. Grants and tokens are Redis's.
 */
function withMachineFile(redis: LeaseStore, file: FileLeaseStore): LeaseStore {
  const gone = (h: LeaseHolder): BusyVerdict => (holderGone(h) ? 'replace' : 'busy');
  return {
    where: redis.where,
    async acquire(holder, ttlMs, verdict) {
      let decided: BusyVerdict | undefined;
      const got = await redis.acquire(holder, ttlMs, (h) => (decided = verdict(h)));
      if (!('grant' in got)) return got;
      const held = await file.mirror(got.grant, holder, ttlMs, verdict);
      if (!('ok' in held)) {
        // A grant of this very run reused (its import job restarted) stays its own; a new one is given back.
        if (decided !== 'reuse') await redis.release(got.grant);
        return { busy: 'busy' in held ? held.busy : (held.taken ?? holder) };
      }
      return got;
    },
    async renew(grant, holder, ttlMs): Promise<RenewResult> {
      const r = await redis.renew(grant, holder, ttlMs);
      if (!r.ok) return r;
      const since = Date.parse(holder.since);
      const held = await file.mirror(grant, holder, ttlMs, gone, Number.isNaN(since) ? undefined : since);
      // Another run of this machine held its lease file after this grant was made (an inline run without REDIS_URL
      // while this lease's holders were away): it may have written these items since, so the lease is lost.
      if ('taken' in held) return { ok: false, ...(held.taken ? { holder: held.taken } : {}) };
      if ('busy' in held)
        throw new ProductSyncError(
          'PS_ERR_RUN_LOCKED',
          `${file.where} is held by ${describeHolder(held.busy)}: not sending until it is free`,
          { retryable: true },
        );
      return r;
    },
    async release(grant) {
      await redis.release(grant);
      await file.release(grant);
    },
    ...(redis.watch ? { watch: redis.watch.bind(redis) } : {}),
  };
}
