/**
 * Keeps the owner leases of queued runs alive between their jobs. A queued run holds its lease from its prepare step to
 * its report, but between jobs (chunks waiting behind other runs' chunks, the parent waiting to be picked up again) no
 * process works for it. Every worker renews, every TTL/3, the lease of each run in the registry whose import job still
 * exists and has not ended; so a run's lease lives while any worker lives, and expires one TTL after the last one died.
 *
 *   <QUEUE_PREFIX>:leases:queued   hash: run id → {owner, api, grant, holder, ttlMs, importJobId}
 *
 * A chunk job checks the lease itself before it sends (run.ts pushChunk); the keeper only keeps it from expiring.
 */
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { realClock } from '../clock.ts';
import { logger } from '../logger.ts';
import { queuedLeasesKey } from '../redis-keys.ts';
import type { Grant, LeaseHolder } from './lease.ts';
import { leaseStoreFor, type LeasePlace } from './lease-store.ts';

/** A queued run's lease, as the registry keeps it. */
export interface QueuedLease {
  runId: string;
  owner: string;
  api: string;
  grant: Grant;
  holder: LeaseHolder;
  ttlMs: number;
  importJobId: string;
}

const ENDED = new Set(['completed', 'failed', 'unknown']);

/** The keeper of one worker process. */
export class LeaseKeeper {
  readonly #redis: Redis;
  readonly #key: string;
  readonly #place: LeasePlace;
  readonly #imports: Queue;
  #cancelTimer: (() => void) | undefined;
  #ticking: Promise<void> | undefined;

  constructor(redis: Redis, place: LeasePlace, imports: Queue) {
    this.#redis = redis;
    this.#place = place;
    this.#key = queuedLeasesKey(place.prefix);
    this.#imports = imports;
  }

  /** Renews the registry's leases every `everyMs` until stopped. */
  start(everyMs: number): void {
    this.#cancelTimer = (this.#place.clock ?? realClock).every(Math.max(100, everyMs), () => void this.tick());
  }

  async stop(): Promise<void> {
    this.#cancelTimer?.();
    await this.#ticking;
  }

  /** Keeps `lease` alive until its run ends. */
  async register(lease: QueuedLease): Promise<void> {
    await this.#redis.hset(this.#key, lease.runId, JSON.stringify(lease));
  }

  /** Releases the lease of a run that ended (report written, or failed for good) and forgets it. */
  async finish(runId: string): Promise<void> {
    const json = await this.#redis.hget(this.#key, runId);
    if (!json) return;
    const lease = JSON.parse(json) as QueuedLease;
    await leaseStoreFor({ ...this.#place, redis: this.#redis }, lease.owner, lease.api).release(lease.grant);
    await this.#redis.hdel(this.#key, runId);
  }

  /** One round of renewals (the timer's; tests call it). */
  tick(): Promise<void> {
    return (this.#ticking ??= this.#renewAll().finally(() => (this.#ticking = undefined)));
  }

  async #renewAll(): Promise<void> {
    let entries: Record<string, string>;
    try {
      entries = await this.#redis.hgetall(this.#key);
    } catch {
      return; // Redis away: the connection reports it; the next round tries again.
    }
    for (const [runId, json] of Object.entries(entries)) {
      try {
        const lease = JSON.parse(json) as QueuedLease;
        const state = await this.#imports.getJobState(lease.importJobId);
        if (ENDED.has(state)) {
          await this.finish(runId);
          continue;
        }
        const r = await leaseStoreFor({ ...this.#place, redis: this.#redis }, lease.owner, lease.api).renew(
          lease.grant,
          lease.holder,
          lease.ttlMs,
        );
        if (!r.ok) {
          logger.warn(
            { runId },
            'a queued run lost its owner lease: its chunks will stop and report what they did not send',
          );
          await this.#redis.hdel(this.#key, runId);
        }
      } catch (err) {
        logger.debug({ runId, err: (err as Error).message }, 'lease renewal failed; trying again next round');
      }
    }
  }
}
