import type { Redis } from 'ioredis';
import type { FleetPace, FleetStart } from './api-limiter.ts';
import { logger } from '../logger.ts';

// The fleet's pace of one API, on one hash (all times in ms, Redis clock). The rule is src/api/rate-pace.ts's, its
// default tuning (DEFAULT_PACE) written into the script: no pace until a refusal a pace should answer; then a share of
// the rate the fleet got accepted just before, grown back (paceGrowth: fast well below the rate refused at, and there,
// as past it, on doubling after a quiet while; near it slowly at first, doubling every 'dbl' quiet seconds; past it on,
// slow-start-like), lowered at most once per window (never below a quarter of the best rate accepted at a lowering, nor
// of 'best', below), dropped once it held nothing back for a while (set again after a storm of refusals, the rate
// accepted then was a fraction of a quarter). A probe refused after a quiet while at about the rate of the last one
// ('lm'), near the best, makes 'dbl' longer; else it starts over, and so does a lowering well below the last one's rate
// (the limit fell) or a pace grown past where it was refused without a refusal (whatever refused is gone: a pace set on
// a capacity by mistake, or during a drop, held the fleet near it long after at the slow doubling). Below half the best
// rate accepted at a lowering since it was set ('peak') or at any refusal ('best') — a limit that fell, and may come
// back — the pace is back to doubling after a short quiet while, whatever 'ceil' and 'dbl' say: grown at a probe's pace
// from there, a pace set during a drop held the fleet near it long after the limit returned. Starts and refusals are
// counted in two measuring windows (this one and the last).
const STATE = `
local k = KEYS[1]
local now = tonumber(ARGV[1])
if now == nil then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local names = {'pace', 'ceil', 'at', 'tat', 'w0', 'ws', 'wr', 'ps', 'pr', 'pw', 'bind', 'low', 'peak', 'dbl', 'lm', 'best'}
local h = redis.call('HMGET', k, unpack(names))
local s = {}
for i, n in ipairs(names) do s[n] = tonumber(h[i]) or 0 end
if s.w0 == 0 then s.w0 = now end
if now - s.w0 >= 500 then
  if now - s.w0 >= 1000 then s.ps, s.pr, s.pw = 0, 0, 0 else s.ps, s.pr, s.pw = s.ws, s.wr, now - s.w0 end
  s.w0, s.ws, s.wr = now, 0, 0
end
if s.pace > 0 then
  local dt = math.min(10, math.max(0, now - s.at) / 1000)
  local t = now - dt * 1000
  local dbl = s.dbl > 0 and s.dbl or 1
  while dt > 0 do
    local step = math.min(dt, 0.1)
    local quiet = math.max(0, t - s.low) / 1000
    local probing = 0.005 * 2 ^ (quiet / dbl)
    local g
    if s.ceil <= 0 then g = math.min(0.7, probing) elseif s.pace < 0.95 * s.ceil then g = math.max(0.05, math.min(0.7, probing)) else g = math.min(0.05, probing) end
    if s.pace < 0.5 * math.max(s.peak, s.best) then g = math.max(g, math.min(0.7, 0.005 * 2 ^ (4 * quiet))) end
    s.pace = s.pace * (1 + g * step)
    if s.ceil > 0 and s.pace > 1.05 * s.ceil then s.ceil, s.dbl, dbl = 0, 1, 1 end
    t = t + step * 1000
    dt = dt - step
  end
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

// What the fleet has in flight: each process's count as of its last start (KEYS[2], one field a process: "n:time"),
// summed over the processes heard from within the last second; and how many processes those are.
const FLIGHT = `
local procs = 1
local function flight(me, mine)
  local all = redis.call('HGETALL', KEYS[2])
  local sum = 0
  for i = 1, #all, 2 do
    local id, v = all[i], all[i + 1]
    if id ~= me then
      local sep = string.find(v, ':')
      local n, at = tonumber(string.sub(v, 1, sep - 1)), tonumber(string.sub(v, sep + 1))
      if now - at <= 1000 then sum, procs = sum + n, procs + 1 else redis.call('HDEL', KEYS[2], id) end
    end
  end
  if me then
    redis.call('HSET', KEYS[2], me, mine .. ':' .. now)
    redis.call('PEXPIRE', KEYS[2], 120000)
  end
  return sum + (mine or 0)
end
`;

// ARGV[1] of every script: the time in ms ('': Redis's clock; a test gives its own).
// ARGV[2]: the interval of API_MAX_RPS (ms, 0: none); ARGV[3], ARGV[4]: this process's id and requests in flight
// (this one included). Books the next start; returns {wait ms, pace, the fleet's requests in flight, the processes
// heard from, the fleet's refusals so far ('nref', counted by REFUSED)}.
const RESERVE = `${STATE}${FLIGHT}
local with = flight(ARGV[3], tonumber(ARGV[4]))
s.ws = s.ws + 1
if s.pace > 0 then
  local sending = (s.ps + s.ws) * 1000 / span
  if sending >= 0.8 * s.pace then s.bind = now elseif now - s.bind > 3000 then s.pace, s.ceil, s.peak, s.dbl, s.lm = 0, 0, 0, 1, 0 end
end
local interval = tonumber(ARGV[2])
if s.pace > 0 then interval = math.max(interval, 1000 / s.pace) end
local wait = 0
if interval > 0 then
  local slot = math.max(s.tat, now)
  s.tat = slot + interval
  wait = slot - now
end
save()
return {math.ceil(wait), string.format('%.3f', s.pace), with, procs, tonumber(redis.call('HGET', k, 'nref') or '0')}
`;

// A refusal (ARGV[2]: the fleet's requests in flight when it was sent; ARGV[3]: the most the fleet had in flight when a
// request this process got accepted was sent, lately; ARGV[4]: their mean). A capacity shared by the fleet refuses once
// the fleet has more in flight than it takes, and stops once the workers' limits fell below it; a rate limit refuses on
// although the fleet has half as many in flight: only then is a pace set (the fleet's in flight at the last refusal,
// 'cw', remembered a few seconds), and only by a refusal sent with no more in flight than the accepted requests' mean.
// A fleet coming down from its start's overshoot is refused with fewer in flight than at its first refusals, and the
// counts (the places refused requests keep, the starts being booked, each process's count as of its last start) read
// well above what the API holds: a fifth fewer than at the last refusal, and below the accepted requests' mean (sent
// during the overshoot, with as inflated counts), set a pace on a capacity at the start. Once set, the pace drops just
// below the rate the fleet got accepted (at most once per window, the same rule as RatePace's), but for a refusal sent
// with more in flight than any accepted one, or than their mean: a capacity's (a worker's concurrency limit probing),
// which would keep a pace set by mistake (at the fleet's start) from growing back. A probe refused at the same rate is
// a steady limit's only near the best rate the fleet got accepted at any refusal ('best', a capacity's too, kept when
// the pace goes): a capacity that fell for a while is probed at the same low rate again and again, and must not be
// taken for one.
const REFUSED = `${STATE}
s.wr = s.wr + 1
redis.call('HINCRBY', k, 'nref', 1)
local with, aw, am = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]) or 0
local cw = tonumber(redis.call('HGET', k, 'cw') or '0')
local cwat = tonumber(redis.call('HGET', k, 'cwat') or '0')
local rate = with < 0 or (s.pace > 0 and (aw <= 0 or with <= aw) and (am <= 0 or with <= am))
if s.pace <= 0 and not rate and cw > 0 and now - cwat <= 5000 and with <= math.max(1, 0.5 * cw) then
  rate = am <= 0 or with <= am
end
if s.pace <= 0 and not rate and now - cwat >= 250 then redis.call('HSET', k, 'cw', with, 'cwat', now) end
local measured = ((s.ps - s.pr) + (s.ws - s.wr)) * 1000 / span
-- A rate measured over a few starts (the fleet's first milliseconds, or after a lull) is no rate: a pace set from it
-- was a fraction of the limit.
if span >= 250 and measured > s.best then s.best = measured end
if rate and now - s.low >= 250 and span >= 250 then
  local sending = (s.ps + s.ws) * 1000 / span
  if measured > 0 and not (s.pace > 0 and sending < 0.8 * s.pace) then
    s.ceil = math.max(s.pace, measured)
    local basis = measured
    if s.pace > 0 and s.pace < basis then basis = s.pace end
    s.peak = math.max(s.peak, measured)
    s.pace = math.max(0.5, math.max(s.peak, s.best) / 4, basis * 0.95)
    if now - s.low >= 2000 then
      local same = math.abs(measured - s.lm) <= 0.15 * s.lm and measured >= 0.7 * math.max(s.peak, s.best)
      if same then s.dbl = math.min(16, math.max(1, s.dbl) * 4) else s.dbl = 1 end
    elseif measured < 0.7 * s.lm then
      s.dbl = 1
    end
    s.lm = measured
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
  readonly #flightKey: string;
  /** This process in the fleet's in-flight hash. */
  readonly #id = `${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
  #degraded = false;
  #pace: number | null = null;
  readonly #now: (() => number) | undefined;

  /** `now`: the time in ms the scripts decide by (default: Redis's own clock; tests give a fake one). */
  constructor(redis: Redis, key: string, now?: () => number) {
    this.#redis = redis;
    this.#key = key;
    this.#flightKey = `${key}:in-flight`;
    this.#now = now;
  }

  /** The fleet's pace as last seen, or null. */
  get pace(): number | null {
    return this.#pace;
  }

  /**
   * Books this process's next start (`inFlight`: its requests in flight, this one included); how long to wait for it
   * and the fleet's requests in flight, or null when Redis does not answer.
   */
  async reserve(maxRps: number | undefined, inFlight = 1): Promise<FleetStart | null> {
    const interval = maxRps ? 1000 / maxRps : 0;
    const r = await this.#eval(RESERVE, String(interval), this.#id, String(inFlight));
    if (r === null) return null;
    const [wait, pace, fleetInFlight, processes, refusals] = r as [number, string, number, number, number];
    this.#pace = Number(pace) > 0 ? Number(pace) : null;
    return {
      wait: Number(wait),
      fleetInFlight: Number(fleetInFlight),
      processes: Number(processes),
      refusals: Number(refusals),
    };
  }

  /**
   * Tells the fleet of a refusal of a request sent with `fleetInFlight` in flight (-1: unknown, taken as a rate
   * limit's), `acceptedWith` the most the fleet had in flight at the sending of this process's accepted requests of
   * late (0: none), `acceptedMean` their mean (0: none); not awaited by the request.
   */
  refused(fleetInFlight = -1, acceptedWith = 0, acceptedMean = 0): void {
    void this.#eval(REFUSED, String(fleetInFlight), String(acceptedWith), String(acceptedMean)).then((pace) => {
      if (pace !== null) this.#pace = Number(pace) > 0 ? Number(pace) : null;
    });
  }

  async #eval(script: string, ...args: string[]): Promise<unknown> {
    try {
      const now = this.#now ? String(Math.round(this.#now())) : '';
      const r = await this.#redis.eval(script, 2, this.#key, this.#flightKey, now, ...args);
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
