/**
 * Fair service across owners (docs/queue.md, "Fairness"): a chunk's place in line (its BullMQ priority) and the
 * per-owner cap (`OWNER_MAX_CHUNKS`), a semaphore of TTL'd slots in Redis per (product API, owner).
 *
 * A chunk's priority is its position within its run: chunk n of every run waits behind chunks 0…n-1 of every run, so a
 * new small run's chunks go ahead of chunk 500 of a big one, and two big runs advance in turns.
 *
 * A slot is a member of a sorted set scored by its expiry (Redis's own clock, so workers' clocks do not matter): taking
 * one drops the expired first, so a worker killed holding slots leaks them for one TTL at most. The member is the
 * chunk's job id: the worker that takes a killed worker's job over takes its slot back at once.
 */
import type { Redis } from 'ioredis';
import { ownerSlotsKeys } from '../redis-keys.ts';
import { within } from '../within.ts';

/** BullMQ's lowest priority (its PRIORITY_LIMIT, 2^21): a larger one is refused. */
const LOWEST_PRIORITY = 2 ** 21;

/** The BullMQ priority of the chunk at `position` (0-based) within its run: 1 for the first (0 is "no priority"). */
export function chunkPriority(position: number): number {
  return Math.min(LOWEST_PRIORITY, 1 + Math.max(0, Math.floor(position)));
}

// KEYS[1] the owner's slots (member: job id, score: expiry in ms, Redis time), KEYS[2] the owners seen.
// ARGV: member, ttl ms, cap (0: no cap, count only), owner. Returns 1 when the slot is held (taken or renewed).
const TAKE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local cap = tonumber(ARGV[3])
if cap > 0 and not redis.call('ZSCORE', KEYS[1], ARGV[1]) and redis.call('ZCARD', KEYS[1]) >= cap then
  return 0
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
redis.call('HSET', KEYS[2], KEYS[1], ARGV[4])
return 1
`;

// KEYS[1] an owner's slots. Returns how many are held (not expired).
const COUNT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')
`;

/** The chunks each owner has in progress across the fleet, and the cap on them. */
export class OwnerSlots {
  readonly #redis: Redis;
  readonly #prefix: string;
  /** Chunks of one owner in progress at once across the fleet; 0: no cap (the slots are still counted). */
  readonly cap: number;
  readonly #ttlMs: number;

  constructor(redis: Redis, o: { prefix: string; cap?: number; ttlMs: number }) {
    this.#redis = redis;
    this.#prefix = o.prefix;
    this.cap = o.cap ?? 0;
    this.#ttlMs = o.ttlMs;
  }

  /**
   * Takes (or renews) a slot of `owner` on the product API `api` for `jobId`; false when the owner already has `cap`
   * chunks in progress.
   */
  async take(owner: string, api: string, jobId: string): Promise<boolean> {
    const k = ownerSlotsKeys(this.#prefix, owner, api);
    const held = await this.#redis.eval(TAKE, 2, k.slots, k.owners, jobId, this.#ttlMs, this.cap, owner);
    return held === 1;
  }

  /**
   * Holds a slot while `work` runs: renewed every third of the TTL, freed at the end. A slot whose renewal fails (Redis
   * away) lapses by itself one TTL later.
   */
  async hold<T>(owner: string, api: string, jobId: string, work: () => Promise<T>): Promise<T> {
    const timer = setInterval(
      () => void this.take(owner, api, jobId).catch(() => undefined),
      Math.max(250, Math.floor(this.#ttlMs / 3)),
    );
    timer.unref();
    try {
      return await work();
    } finally {
      clearInterval(timer);
      // Bounded: without Redis the slot lapses by itself.
      await within(this.#redis.zrem(ownerSlotsKeys(this.#prefix, owner, api).slots, jobId), 2000);
    }
  }
}

/** Chunks in progress per owner across the fleet (the owners that took a slot since their key last expired). */
export async function chunksInProgress(redis: Redis, prefix: string): Promise<Map<string, number>> {
  const { owners } = ownerSlotsKeys(prefix, '', '');
  const all = await redis.hgetall(owners);
  const out = new Map<string, number>();
  for (const [key, owner] of Object.entries(all)) {
    const n = Number(await redis.eval(COUNT, 1, key));
    if (n > 0) out.set(owner, (out.get(owner) ?? 0) + n);
    else if ((await redis.exists(key)) === 0) await redis.hdel(owners, key);
  }
  return out;
}
