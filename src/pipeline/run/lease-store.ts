/**
 * Where the owner lease of a run lives: Redis when the process has one (REDIS_URL), else the state directory's lease
 * file.
 */
import type { Redis } from 'ioredis';
import { leaseName, type LeaseStore } from './lease.ts';
import { fileLeaseStore } from './lease-file.ts';
import { redisLeaseStore } from './lease-redis.ts';

/** What picks the store of a lease. */
export interface LeasePlace {
  redis?: Redis | null;
  /** QUEUE_PREFIX: the Redis keys' prefix. */
  prefix: string;
  /** STATE_DIR: where lease files live without Redis. */
  stateDir: string;
}

/** The store of the lease of (owner, api). */
export function leaseStoreFor(place: LeasePlace, owner: string, api: string): LeaseStore {
  const name = leaseName(owner, api);
  return place.redis
    ? redisLeaseStore(place.redis, place.prefix, name)
    : fileLeaseStore(place.stateDir, name, owner, api);
}
