import type { Redis } from 'ioredis';
import { logger } from '../logger.ts';
import { Throttle } from '../pipeline/sync/throttle.ts';

// GCRA over one key: each call reserves the next free start time (ms, Redis clock) of the whole fleet and returns how
// long the caller must wait for it. ARGV[1]: interval between starts (ms, may be fractional; 0: no rate, only pauses);
// ARGV[2]: a pause (ms) pushed onto the schedule instead (a 429), 0 for an ordinary reservation.
const RESERVE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local pause = tonumber(ARGV[2])
local interval = tonumber(ARGV[1])
-- No rate and no pause to set: only read the schedule (no write per request).
if pause == 0 and interval == 0 then return math.ceil(tat - now) end
local slot = tat
local nextTat
if pause > 0 then
  nextTat = math.max(tat, now + pause)
  slot = now
else
  nextTat = tat + interval
end
redis.call('SET', KEYS[1], string.format('%.3f', nextTat), 'PX', math.ceil(nextTat - now) + 1000)
return math.ceil(slot - now)
`;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * A request rate shared by every process on one Redis key: `take()` resolves when this process may start one request.
 * Without a rate it only carries pauses: a 429 seen by one process holds back the starts of all.
 */
export class SharedRate {
  readonly #redis: Redis;
  readonly #key: string;
  readonly #intervalMs: number;
  #degraded = false;

  constructor(redis: Redis, key: string, maxPerSecond?: number) {
    this.#redis = redis;
    this.#key = key;
    this.#intervalMs = maxPerSecond ? 1000 / maxPerSecond : 0;
  }

  /**
   * Waits for this process's next slot of the fleet-wide rate; without Redis it does not wait (the local pace still
   * holds).
   */
  async take(): Promise<void> {
    const wait = await this.#reserve(0);
    if (wait > 0) await sleep(wait);
  }

  /** Pushes every process's next start at least `ms` into the future (a 429 with its Retry-After). */
  async pause(ms: number): Promise<void> {
    await this.#reserve(Math.max(1, ms));
  }

  async #reserve(pauseMs: number): Promise<number> {
    try {
      const wait = Number(await this.#redis.eval(RESERVE, 1, this.#key, String(this.#intervalMs), String(pauseMs)));
      if (this.#degraded) logger.info('shared API rate limit back on Redis');
      this.#degraded = false;
      return wait;
    } catch (err) {
      // Redis down: requests go on at this process's own pace rather than stalling the chunk in hand.
      if (!this.#degraded)
        logger.warn(
          { err: (err as Error).message },
          'shared API rate limit unavailable; pacing per process until Redis is back',
        );
      this.#degraded = true;
      return 0;
    }
  }
}

/** A throttle whose starts also respect a fleet-wide `SharedRate`, and whose 429s pause the whole fleet. */
export class SharedThrottle extends Throttle {
  readonly #inner: Throttle;
  readonly #rate: SharedRate;

  constructor(inner: Throttle, rate: SharedRate) {
    super(1);
    this.#inner = inner;
    this.#rate = rate;
  }

  /** Current concurrency limit of this process. */
  override get limit(): number {
    return this.#inner.limit;
  }

  /** Resolves when an operation may start here (local limit) and in the fleet (shared rate). */
  override async acquire(): Promise<void> {
    await this.#inner.acquire();
    await this.#rate.take();
  }

  /** Frees a local slot. */
  override release(ok = true): void {
    this.#inner.release(ok);
  }

  /** A 429: this process backs off (AIMD) and the whole fleet waits out Retry-After. */
  override rateLimited(retryAfterMs: number | null): void {
    this.#inner.rateLimited(retryAfterMs);
    void this.#rate.pause(retryAfterMs ?? 1000);
  }
}
