import type { Redis } from 'ioredis';
import type { FleetPace } from './api-limiter.ts';
import { logger } from '../logger.ts';

// The fleet's pace of one API, on one hash (all times in ms, Redis clock). The rule is src/api/rate-pace.ts's: no pace
// until a refusal a pace should answer; then the rate the fleet got accepted just before, less 5 %, grown back (5 %/s,
// 0.5 %/s near the rate refused at), lowered at most once per 250 ms (never below a quarter of the best rate accepted
// at a lowering), dropped after 3 s of holding nothing back.
// Starts and refusals are counted in two windows of 500 ms (this one and the last) to measure the fleet's rates.
const STATE = `
local k = KEYS[1]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local h = redis.call('HMGET', k, 'pace', 'ceil', 'at', 'tat', 'w0', 'ws', 'wr', 'ps', 'pr', 'pw', 'bind', 'low', 'peak')
local s = {}
local names = {'pace', 'ceil', 'at', 'tat', 'w0', 'ws', 'wr', 'ps', 'pr', 'pw', 'bind', 'low', 'peak'}
for i, n in ipairs(names) do s[n] = tonumber(h[i]) or 0 end
if s.w0 == 0 then s.w0 = now end
if now - s.w0 >= 500 then
  if now - s.w0 >= 1000 then s.ps, s.pr, s.pw = 0, 0, 0 else s.ps, s.pr, s.pw = s.ws, s.wr, now - s.w0 end
  s.w0, s.ws, s.wr = now, 0, 0
end
if s.pace > 0 then
  local dt = math.min(10, math.max(0, now - s.at) / 1000)
  local near = s.ceil > 0 and s.pace >= 0.95 * s.ceil
  s.pace = s.pace * (1 + (near and 0.005 or 0.05) * dt)
  if s.ceil > 0 and s.pace > 1.05 * s.ceil then s.ceil = 0 end
end
s.at = now
local span = math.max(50, s.pw + now - s.w0)
local function save()
  local flat = {}
  for _, n in ipairs(names) do table.insert(flat, n); table.insert(flat, string.format('%.3f', s[n])) end
  redis.call('HSET', k, unpack(flat))
  redis.call('PEXPIRE', k, 120000)
end
`;

// ARGV[1]: the interval of API_MAX_RPS (ms, 0: none). Books the next start; returns {wait ms, pace}.
const RESERVE = `${STATE}
s.ws = s.ws + 1
if s.pace > 0 then
  local sending = (s.ps + s.ws) * 1000 / span
  if sending >= 0.8 * s.pace then s.bind = now elseif now - s.bind > 3000 then s.pace, s.ceil, s.peak = 0, 0, 0 end
end
local interval = tonumber(ARGV[1])
if s.pace > 0 then interval = math.max(interval, 1000 / s.pace) end
local wait = 0
if interval > 0 then
  local slot = math.max(s.tat, now)
  s.tat = slot + interval
  wait = slot - now
end
save()
return {math.ceil(wait), string.format('%.3f', s.pace)}
`;

// A refusal a pace should answer: the pace drops to 95 % of the rate the fleet got accepted (once per 250 ms).
const REFUSED = `${STATE}
s.wr = s.wr + 1
if now - s.low >= 250 then
  local measured = ((s.ps - s.pr) + (s.ws - s.wr)) * 1000 / span
  local sending = (s.ps + s.ws) * 1000 / span
  if measured > 0 and not (s.pace > 0 and sending < 0.8 * s.pace) then
    s.ceil = math.max(s.pace, measured)
    local basis = measured
    if s.pace > 0 and s.pace < basis then basis = s.pace end
    s.peak = math.max(s.peak, measured)
    s.pace = math.max(0.5, s.peak / 4, basis * 0.95)
    s.low, s.bind = now, now
  end
end
save()
return string.format('%.3f', s.pace)
`;

/**
 * The pace of one API shared by every process through one Redis hash (workers of every owner): each start is booked
 * on the fleet's schedule (GCRA), at API_MAX_RPS and at the pace the fleet learned from the API's refusals. Without
 * Redis it answers null, and each process paces itself until Redis is back.
 */
export class SharedRate implements FleetPace {
  readonly #redis: Redis;
  readonly #key: string;
  #degraded = false;
  #pace: number | null = null;

  constructor(redis: Redis, key: string) {
    this.#redis = redis;
    this.#key = key;
  }

  /** The fleet's pace as last seen, or null. */
  get pace(): number | null {
    return this.#pace;
  }

  /** Books this process's next start; milliseconds to wait for it, or null when Redis does not answer. */
  async reserve(maxRps: number | undefined): Promise<number | null> {
    const interval = maxRps ? 1000 / maxRps : 0;
    const r = await this.#eval(RESERVE, String(interval));
    if (r === null) return null;
    const [wait, pace] = r as [number, string];
    this.#pace = Number(pace) > 0 ? Number(pace) : null;
    return Number(wait);
  }

  /** Tells the fleet of a refusal (not awaited by the request). */
  refused(): void {
    void this.#eval(REFUSED).then((pace) => {
      if (pace !== null) this.#pace = Number(pace) > 0 ? Number(pace) : null;
    });
  }

  async #eval(script: string, ...args: string[]): Promise<unknown> {
    try {
      const r = await this.#redis.eval(script, 1, this.#key, ...args);
      if (this.#degraded) logger.info('shared API pace back on Redis');
      this.#degraded = false;
      return r;
    } catch (err) {
      // Redis down: requests go on at this process's own pace rather than stalling the chunk in hand.
      if (!this.#degraded)
        logger.warn(
          { err: (err as Error).message },
          'shared API pace unavailable; pacing per process until Redis is back',
        );
      this.#degraded = true;
      return null;
    }
  }
}
