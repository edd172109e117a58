import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { ApiLimiter, type ApiLimiterOptions, type LimiterClock } from '../src/api/api-limiter.ts';
import { RatePace } from '../src/api/rate-pace.ts';
import { SharedRate } from '../src/api/shared-rate.ts';

/** A clock that moves only when told: sleeps resolve when it reaches their time. */
class FakeClock implements LimiterClock {
  t = 0;
  timers: { at: number; resolve: () => void }[] = [];
  now = () => this.t;
  sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      this.timers.push({ at: this.t + ms, resolve });
    });
  /** Moves to the next timer (or `to`, when earlier) and fires what is due. */
  async step(to = Infinity): Promise<boolean> {
    await flush();
    const next = Math.min(to, ...this.timers.map((x) => x.at));
    if (!Number.isFinite(next)) return false;
    this.t = Math.max(this.t, next);
    const due = this.timers.filter((x) => x.at <= this.t);
    this.timers = this.timers.filter((x) => x.at > this.t);
    for (const d of due) d.resolve();
    await flush();
    return true;
  }
}

const flush = () => new Promise<void>((r) => setImmediate(r));

/** A simulated API: how it answers a request given what it has in hand (`leave` once an accepted one is done). */
interface SimApi {
  /** Called when a request arrives; returns its status and how long it takes. */
  arrive(now: number): { status: 200 | 429; ms: number };
  leave(): void;
}

/**
 * Sends `total` requests through the limiter against a simulated API (each refused one waits 1 s and is sent again),
 * with `pending` callers at once; returns the refusals and the time taken.
 */
async function simulate(limiter: ApiLimiter, clock: FakeClock, api: SimApi, total: number, pending = 64) {
  return simulateFleet([limiter], clock, api, total, pending);
}

/**
 * {@link simulate} for a fleet: each limiter (a process) has `pending` callers of its own, all of them taking the next
 * of the same `total` requests; `settle` resolves once what the processes asked their shared store is answered (the
 * clock moves only then). Also returns the requests accepted each second.
 */
async function simulateFleet(
  limiters: ApiLimiter[],
  clock: FakeClock,
  api: SimApi,
  total: number,
  pending = 64,
  settle: () => Promise<void> = flush,
) {
  let done = 0;
  let refused = 0;
  let next = 0;
  const perSecond: number[] = [];
  const one = async (limiter: ApiLimiter): Promise<void> => {
    for (;;) {
      const permit = await limiter.acquire();
      const answer = api.arrive(clock.now());
      await clock.sleep(answer.ms);
      if (answer.status === 200) api.leave();
      if (answer.status === 200) {
        limiter.release(permit, 'ok');
        done++;
        const s = Math.floor(clock.now() / 1000);
        perSecond[s] = (perSecond[s] ?? 0) + 1;
        return;
      }
      refused++;
      limiter.release(permit, 'refused');
      await limiter.waitRetryAfter(1000);
    }
  };
  const lanes = limiters.flatMap((limiter) =>
    Array.from({ length: pending }, async () => {
      while (next < total) {
        next++;
        await one(limiter);
      }
    }),
  );
  const all = Promise.all(lanes);
  let finished = false;
  void all.then(() => (finished = true));
  while (!finished) {
    await settle();
    if (!(await clock.step())) await flush();
  }
  return { done, refused, ms: clock.now(), perSecond: Array.from(perSecond, (n) => n ?? 0) };
}

/** At most `capacity` at once; 429 past it (answered at once). */
function capacityApi(capacity: () => number, latencyMs = 20): SimApi {
  let n = 0;
  return {
    arrive() {
      if (n >= capacity()) return { status: 429, ms: 1 };
      n++;
      return { status: 200, ms: latencyMs };
    },
    leave() {
      n--;
    },
  };
}

/** A token bucket of `rate` a second and `burst` tokens: 429 when empty (answered at once), else `latency()` ms. */
function tokenBucketApi(rate: number, burst: number, latency: () => number = () => 20): SimApi {
  let tokens = burst;
  let at = 0;
  return {
    arrive(now) {
      tokens = Math.min(burst, tokens + ((now - at) * rate) / 1000);
      at = now;
      if (tokens < 1) return { status: 429, ms: 1 };
      tokens -= 1;
      return { status: 200, ms: latency() };
    },
    leave() {},
  };
}

describe('ApiLimiter', () => {
  it('lowers the limit gently on refusals, once per window, and not for requests sent before the lowering', async () => {
    const clock = new FakeClock();
    const limiter = new ApiLimiter({ maxConcurrency: 32, clock, concurrency: { initial: 8 } });
    expect(limiter.limit).toBe(8);
    const permits = await Promise.all(Array.from({ length: 8 }, () => limiter.acquire()));
    clock.t = 5;
    // Three refusals of requests that were all in flight together, the first with seven accepted ahead of it: one
    // lowering, by a tenth.
    for (const i of [7, 5, 6]) limiter.release(permits[i]!, 'refused');
    expect(limiter.limit).toBe(7);
    // A request sent after the lowering (once the refused ones' places are free, a round trip later) and refused lowers
    // it again: to the five accepted ahead of it.
    await clock.step();
    const later = await limiter.acquire();
    clock.t += 5;
    limiter.release(later, 'refused');
    expect(limiter.limit).toBe(5);
    expect(limiter.snapshot().refusals).toBe(4);
  });

  it('falls at once to what the API held accepted when refused, at most by half: not a tenth a refusal', async () => {
    const clock = new FakeClock();
    const limiter = new ApiLimiter({ maxConcurrency: 64, clock, concurrency: { initial: 32 } });
    const permits = await Promise.all(Array.from({ length: 32 }, () => limiter.acquire()));
    clock.t = 5;
    // 20 accepted ahead of the 21st sent: a capacity of 20, found with one refusal.
    limiter.release(permits[20]!, 'refused');
    expect(limiter.limit).toBe(20);
    // Refused with none accepted ahead: halved, not down to one.
    for (const p of permits) if (p !== permits[20]) limiter.release(p, 'ok');
    await clock.step();
    const next = await limiter.acquire();
    clock.t += 5;
    const before = limiter.limit;
    limiter.release(next, 'refused');
    expect(limiter.limit).toBe(Math.floor(before / 2));
  });

  it('keeps the place of a refused request for a round trip: the waiting ones are not sent into the same refusal', async () => {
    const clock = new FakeClock();
    const limiter = new ApiLimiter({ maxConcurrency: 32, clock, concurrency: { initial: 4 } });
    const permits = await Promise.all(Array.from({ length: 4 }, () => limiter.acquire()));
    let started = 0;
    for (let i = 0; i < 8; i++) void limiter.acquire().then(() => started++);
    clock.t = 20;
    limiter.release(permits[3]!, 'refused');
    expect(limiter.limit).toBe(3);
    await flush();
    expect(started).toBe(0);
    // A round trip later its place is free; the accepted ones' answers free theirs.
    await clock.step();
    limiter.release(permits[0]!, 'ok');
    await flush();
    expect(started).toBe(1);
  });

  it('in a fleet, keeps the place of a refused request for a round trip: the waiting ones are not sent into the same refusal', async () => {
    const clock = new FakeClock();
    // A fleet of one that paces nothing.
    const fleet = {
      reserve: () => Promise.resolve({ wait: 0, fleetInFlight: 1 }),
      refused: () => undefined,
      pace: null,
    };
    const limiter = new ApiLimiter({ maxConcurrency: 32, clock, fleet, concurrency: { initial: 4 } });
    const permits = await Promise.all(Array.from({ length: 4 }, () => limiter.acquire()));
    let started = 0;
    for (let i = 0; i < 8; i++) void limiter.acquire().then(() => started++);
    clock.t = 20;
    // Two refusals of requests sent together: the limit falls to 3 once, and neither place goes to a waiter at once.
    limiter.release(permits[0]!, 'refused');
    limiter.release(permits[1]!, 'refused');
    expect(limiter.limit).toBe(3);
    await flush();
    expect(started).toBe(0);
    // A round trip later (no answer yet: a window's length) their places are free: one more fits the limit of 3.
    await clock.step();
    await flush();
    expect(started).toBe(1);
    expect(clock.now()).toBe(120);
    limiter.release(permits[2]!, 'ok');
    limiter.release(permits[3]!, 'ok');
    await flush();
    expect(started).toBe(3);
  });

  it('in a fleet, a refusal sent with far more in flight across the fleet than accepted ones lowers the limit in proportion', async () => {
    const clock = new FakeClock();
    // A fleet that paces nothing and has `fleetInFlight` in flight at each start.
    let fleetInFlight = 30;
    const fleet = {
      reserve: () => Promise.resolve({ wait: 0, fleetInFlight }),
      refused: () => undefined,
      pace: null,
    };
    const limiter = new ApiLimiter({ maxConcurrency: 32, clock, fleet, concurrency: { initial: 16 } });
    // Accepted with 30 in flight across the fleet.
    const accepted = await Promise.all(Array.from({ length: 8 }, () => limiter.acquire()));
    clock.t = 20;
    for (const p of accepted) limiter.release(p, 'ok');
    const before = limiter.limit;
    // The fleet's slow starts overshot: refused with twice as many in flight as accepted ones were sent with.
    fleetInFlight = 60;
    const overshoot = await limiter.acquire();
    clock.t = 21;
    limiter.release(overshoot, 'refused');
    expect(limiter.limit).toBe(Math.floor(before / 2));
    // A refusal at about what was accepted (a probe, a rate limit): the gentle factor.
    await clock.step();
    fleetInFlight = 31;
    const probe = await limiter.acquire();
    clock.t += 1;
    const gentle = limiter.limit;
    limiter.release(probe, 'refused');
    expect(limiter.limit).toBe(Math.floor(gentle * 0.9));
  });

  it('waits for a free place and wakes a waiter when one is released', async () => {
    const clock = new FakeClock();
    const limiter = new ApiLimiter({ maxConcurrency: 2, clock });
    const a = await limiter.acquire();
    await limiter.acquire();
    let third = false;
    const c = limiter.acquire().then(() => (third = true));
    await flush();
    expect(third).toBe(false);
    limiter.release(a, 'ok');
    await c;
    expect(third).toBe(true);
  });

  it('finds a capacity of 16 that refuses past it, with few refusals, and stays under API_CONCURRENCY', async () => {
    const clock = new FakeClock();
    const limiter = new ApiLimiter({ maxConcurrency: 32, clock });
    const r = await simulate(
      limiter,
      clock,
      capacityApi(() => 16),
      4000,
    );
    expect(r.done).toBe(4000);
    // The start finds it with a few refusals; then it is probed rarely (each probe costs a request its Retry-After).
    expect(r.refused).toBeLessThanOrEqual(6);
    // 4000 requests of 20 ms, 16 at once: 5 s at best; no refused request waits its Retry-After at the end.
    expect(r.ms).toBeLessThan(5000 / 0.9);
    expect(limiter.limit).toBeGreaterThanOrEqual(12);
    expect(limiter.limit).toBeLessThanOrEqual(17);
  });

  it('never goes above API_CONCURRENCY where the API has no limit, and grows to it', async () => {
    const clock = new FakeClock();
    const limiter = new ApiLimiter({ maxConcurrency: 32, clock });
    const r = await simulate(
      limiter,
      clock,
      capacityApi(() => Infinity),
      2000,
    );
    expect(r.refused).toBe(0);
    expect(limiter.limit).toBe(32);
  });

  it('shrinks when the API queues (latency grows) and keeps it busy', async () => {
    const clock = new FakeClock();
    const limiter = new ApiLimiter({ maxConcurrency: 64, clock });
    let n = 0;
    const queueing: SimApi = {
      arrive() {
        n++;
        // 8 served at once, 20 ms each: the latency grows with what waits behind them.
        return { status: 200, ms: 20 * Math.max(1, n / 8) };
      },
      leave() {
        n--;
      },
    };
    const r = await simulate(limiter, clock, queueing, 3000, 128);
    expect(r.refused).toBe(0);
    expect(limiter.limit).toBeLessThanOrEqual(20);
    expect(limiter.limit).toBeGreaterThanOrEqual(8);
    // 3000 × 20 ms / 8: 7.5 s at best.
    expect(r.ms).toBeLessThan(7500 / 0.85);
  });

  it('takes a latency that rose for everyone (a loaded machine, a slower API) as the new baseline, not as a queue', async () => {
    const clock = new FakeClock();
    const limiter = new ApiLimiter({ maxConcurrency: 64, clock });
    // No limit; 20 ms, then from 3 s on 40 ms, whatever is in flight (not a queue of ours), but for a quiet spell of
    // 150 ms every 5 s (at 20 ms again): the lowest latency ever seen is not the baseline of a machine that got busy.
    const ms = (now: number) => (now < 3000 || now % 5000 < 150 ? 20 : 40);
    const slower: SimApi = { arrive: (now) => ({ status: 200, ms: ms(now) }), leave() {} };
    const seen: number[] = [];
    const run = simulate(limiter, clock, slower, 60_000, 128);
    const watch = (async () => {
      while (clock.now() < 2900) await flush();
      seen.push(limiter.limit);
      while (clock.now() < 29_000) await flush();
      seen.push(limiter.limit);
    })();
    const r = await run;
    await watch;
    expect(r.refused).toBe(0);
    expect(seen[0]).toBe(64);
    // The baseline is measured again every 10 s: the limit is back near API_CONCURRENCY.
    expect(seen[1]).toBeGreaterThanOrEqual(56);
  });

  it('does not read the latency of a client whose own event loop is saturated as a queue at the server', async () => {
    const clock = new FakeClock();
    const limiter = new ApiLimiter({ maxConcurrency: 64, clock, loopBusy: () => 0.95, concurrency: { refreshMs: 0 } });
    // Answers that take longer the more are in flight, as a CPU-bound client sees them.
    let n = 0;
    const api: SimApi = {
      arrive() {
        n++;
        return { status: 200, ms: 20 + n / 2 };
      },
      leave() {
        n--;
      },
    };
    await simulate(limiter, clock, api, 8000, 128);
    expect(limiter.limit).toBe(64);
  });

  it('falls when the capacity drops to a quarter for 10 s and is back within 10 s of its return', async () => {
    const clock = new FakeClock();
    const limiter = new ApiLimiter({ maxConcurrency: 32, clock });
    let capacity = 16;
    const api = capacityApi(() => capacity);
    const seen: number[] = [];
    const run = simulate(limiter, clock, api, 16_000);
    const watch = (async () => {
      // Long enough at 16 for the probes of a steady capacity to be rare.
      while (clock.now() < 6000) await flush();
      seen.push(limiter.limit);
      capacity = 4;
      while (clock.now() < 8000) await flush();
      seen.push(limiter.limit);
      while (clock.now() < 16_000) await flush();
      capacity = 16;
      while (clock.now() < 24_000) await flush();
      seen.push(limiter.limit);
    })();
    const r = await run;
    await watch;
    expect(r.done).toBe(16_000);
    expect(seen[0]).toBeGreaterThanOrEqual(15);
    expect(seen[1]).toBeLessThanOrEqual(5);
    // 0.9 of 16 within 8 s of the return.
    expect(seen[2]).toBeGreaterThanOrEqual(15);
    expect(r.refused / 16_000).toBeLessThan(0.02);
  });

  it('keeps a token bucket of 200 a second busy with few refusals, latency jittering', async () => {
    const clock = new FakeClock();
    const limiter = new ApiLimiter({ maxConcurrency: 32, clock });
    // 200 a second, a burst of 20; latency 20 to 50 ms (a busy machine), so that the concurrency alone cannot hold it.
    let seed = 7;
    const bucket = tokenBucketApi(200, 20, () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return 20 + 30 * (seed / 2147483648) ** 2;
    });
    const r = await simulate(limiter, clock, bucket, 4000);
    expect(r.done).toBe(4000);
    // The target is 1 % and 0.9 of the limit; with this jitter the limiter holds the first, not quite the second
    // (docs/performance.md).
    expect(r.refused / 4000).toBeLessThan(0.01);
    // 4000 at 200 a second: 20 s at best.
    expect(r.ms).toBeLessThan(20_000 / 0.85);
  });

  it('holds a token bucket of 200 a second under 1 % refused and at 0.9 of it from the start', async () => {
    const clock = new FakeClock();
    const limiter = new ApiLimiter({ maxConcurrency: 32, clock });
    // A burst of 20, then 200 a second; 20 ms a request: 4 at once use it, the slow start grows far past that.
    const r = await simulate(limiter, clock, tokenBucketApi(200, 20), 4000);
    expect(r.done).toBe(4000);
    expect(r.refused / 4000).toBeLessThan(0.01);
    for (const n of r.perSecond.slice(0, -1)) expect(n).toBeGreaterThanOrEqual(0.9 * 200);
  });

  it('probes a steady token bucket less and less often: a refused probe holds the limit longer', async () => {
    const clock = new FakeClock();
    const limiter = new ApiLimiter({ maxConcurrency: 32, clock });
    // 200 a second, a burst of 20; latency 20 to 24 ms: 4 at once hold it, 5 exceed it (each probe of 5 refused).
    let seed = 7;
    const bucket = tokenBucketApi(200, 20, () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return 20 + 4 * (seed / 2147483648);
    });
    let start = 0;
    const run = simulate(limiter, clock, bucket, 4000);
    void (async () => {
      while (clock.now() < 1000) await flush();
      start = limiter.snapshot().refusals;
    })();
    const r = await run;
    expect(r.done).toBe(4000);
    // The start's refusals (the slow start past the bucket's rate as its burst runs out), then three probes of 5 in
    // about 20 s, each refused once or twice (a hold that started over at the refusal after a probe: five or six).
    expect(r.refused - start).toBeLessThanOrEqual(8);
    expect(r.refused / 4000).toBeLessThan(0.006);
  });

  it('paces starts at a rate learned from refusals (a token bucket one request at a time exceeds)', async () => {
    const clock = new FakeClock();
    const limiter = new ApiLimiter({ maxConcurrency: 32, clock });
    // 20 a second, a burst of 5; one request at a time would send 50 a second.
    const bucket = tokenBucketApi(20, 5);
    let early = 0;
    const run = simulate(limiter, clock, bucket, 1000);
    void (async () => {
      while (clock.now() < 2000) await flush();
      early = limiter.snapshot().refusals;
    })();
    const r = await run;
    expect(r.done).toBe(1000);
    // The first two seconds find the limit (some dozens of refusals); after them, the pace holds.
    expect(early).toBeLessThan(100);
    expect((r.refused - early) / 1000).toBeLessThan(0.01);
    // 1000 at 20 a second: 50 s at best.
    expect(r.ms).toBeLessThan(50_000 / 0.9);
    expect(limiter.snapshot().rate).toBeGreaterThan(15);
    expect(limiter.snapshot().rate).toBeLessThan(25);
  });

  it('paces at API_MAX_RPS when told', async () => {
    const clock = new FakeClock();
    const limiter = new ApiLimiter({ maxConcurrency: 32, maxRps: 50, clock });
    expect(limiter.snapshot().rate).toBe(50);
    const r = await simulate(
      limiter,
      clock,
      capacityApi(() => Infinity),
      500,
    );
    // 500 at 50 a second: 10 s.
    expect(r.ms).toBeGreaterThanOrEqual(9900);
    expect(r.ms).toBeLessThan(10_500);
  });

  it('counts the time spent on the API limits (a Retry-After)', async () => {
    const clock = new FakeClock();
    const limiter = new ApiLimiter({ maxConcurrency: 4, clock });
    const wait = limiter.waitRetryAfter(1500);
    await clock.step();
    await wait;
    expect(limiter.snapshot().limitedMs).toBe(1500);
  });
});

describe('RatePace', () => {
  it('has no pace until a refusal, then the accepted rate less a little, grown back slowly', () => {
    const pace = new RatePace();
    for (let t = 0; t <= 1000; t += 10) {
      pace.sent(t);
      pace.ok(t);
    }
    expect(pace.current(1000)).toBeNull();
    expect(pace.refused(1000)).toBe(true);
    const p = pace.current(1000)!;
    expect(p).toBeGreaterThan(90);
    expect(p).toBeLessThan(100);
    // Lowered at most once per window.
    expect(pace.refused(1100)).toBe(false);
    // Near the rate it was refused at, it grows by half a percent a second.
    expect(pace.current(3000)!).toBeGreaterThan(p);
    expect(pace.current(3000)!).toBeLessThan(p * 1.06);
  });

  it('sets no first pace before a second of requests: the rate of the start counts a token bucket`s burst', () => {
    const pace = new RatePace();
    // A burst of 20 answered at once, then 200 a second.
    for (let i = 0; i < 20; i++) {
      pace.sent(0);
      pace.ok(20);
    }
    for (let t = 20; t <= 1200; t += 5) {
      pace.sent(t);
      pace.ok(t + 20);
    }
    expect(pace.refused(100)).toBe(false);
    expect(pace.engaged).toBe(false);
    expect(pace.refused(1200)).toBe(true);
    expect(pace.current(1200)!).toBeGreaterThan(0.9 * 200);
    expect(pace.current(1200)!).toBeLessThanOrEqual(200);
  });

  it('grows back to 0.9 of a limit that returned within 10 s, and probes a steady limit less and less often', () => {
    // Starts at the pace, each accepted unless the API's rate `limit` (a second) is exceeded; refusals reported.
    const drive = (pace: RatePace, from: number, to: number, limit: (now: number) => number) => {
      let t = from;
      let refusals = 0;
      const window: number[] = [];
      while (t < to) {
        const rate = pace.current(t) ?? 400;
        pace.sent(t);
        while (window.length > 0 && window[0]! <= t - 1000) window.shift();
        if (window.length >= limit(t)) {
          refusals++;
          pace.refused(t);
        } else {
          window.push(t);
          pace.ok(t);
        }
        t += 1000 / rate;
      }
      return refusals;
    };
    // A limit of 50 a second, learned; then it is back at 200.
    const back = new RatePace();
    drive(back, 0, 10_000, () => 50);
    expect(back.current(10_000)!).toBeLessThan(55);
    drive(back, 10_000, 20_000, () => 200);
    expect(back.current(20_000)!).toBeGreaterThanOrEqual(180);
    // A steady limit of 200 a second: refused probes come rarer (fewer refusals in the second half of a minute).
    const steady = new RatePace();
    const first = drive(steady, 0, 30_000, () => 200);
    const second = drive(steady, 30_000, 60_000, () => 200);
    expect(second).toBeLessThan(first);
    expect(second / (30 * 200)).toBeLessThan(0.005);
  });
});

describe('ApiLimiter in a fleet (four processes sharing a pace through Redis)', () => {
  const conns: Redis[] = [];
  afterAll(() => {
    for (const c of conns) c.disconnect();
  });
  /** Four limiters (processes), each on its own connection to the shared-rate script, on the fake clock. */
  function fleet(clock: FakeClock, name: string, options: Partial<ApiLimiterOptions> = {}) {
    const key = `{ps-fleet-${process.pid}-${name}}:api-rate`;
    let pending = 0;
    const rates: SharedRate[] = [];
    const limiters = Array.from({ length: 4 }, () => {
      const redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
      conns.push(redis);
      // Its evals counted: the clock moves once they are answered.
      const counted = {
        eval: (...args: Parameters<Redis['eval']>) => {
          pending++;
          return redis.eval(...args).finally(() => pending--);
        },
      } as unknown as Redis;
      const rate = new SharedRate(counted, key, () => 1e9 + clock.now());
      rates.push(rate);
      return new ApiLimiter({ maxConcurrency: 32, clock, fleet: rate, ...options });
    });
    const settle = async () => {
      for (;;) {
        await flush();
        if (pending === 0) return;
        while (pending > 0) await new Promise<void>((r) => setImmediate(r));
      }
    };
    return { limiters, settle, pace: () => rates[0]!.pace };
  }

  /** The fleet's pace (null: none) at the end of each second up to `seconds`. */
  function pacesEachSecond(clock: FakeClock, pace: () => number | null, seconds: number) {
    const paces: (number | null)[] = [];
    void (async () => {
      for (let s = 1; s <= seconds; s++) {
        while (clock.now() < s * 1000) await flush();
        paces.push(pace());
      }
    })();
    return paces;
  }

  it('finds a capacity of 32 shared by four from their start, no pace holding it back', async () => {
    const clock = new FakeClock();
    const { limiters, settle, pace } = fleet(clock, 'start');
    const paces = pacesEachSecond(clock, pace, 5);
    // 32 at once of 50 ms: 640 a second (what each told 8 would get), reached from the first second.
    const r = await simulateFleet(
      limiters,
      clock,
      capacityApi(() => 32, 50),
      4000,
      64,
      settle,
    );
    expect(r.done).toBe(4000);
    for (const n of r.perSecond.slice(0, 5)) expect(n).toBeGreaterThanOrEqual(0.9 * 640);
    // The start's refusals set no pace below the capacity (one above it holds nothing back, and goes).
    for (const p of paces) if (p !== null) expect(p).toBeGreaterThanOrEqual(0.9 * 640);
    // Each takes about its share: none is left at one or two in flight while the others hold the capacity.
    for (const l of limiters) expect(l.limit).toBeGreaterThanOrEqual(4);
    // The workers' concurrency limits overshoot at the start, then each probes past its share now and then: 0.5–1.6 %
    // refused in these runs (docs/performance.md), and how many depends on the order in which the real Redis answers
    // the four (more with other test files beside it): this bound refuses a storm.
    expect(r.refused / 4000).toBeLessThan(0.04);
  }, 120_000);

  it('follows a capacity shared by four down to a quarter for 10 s and is back within 10 s of its return', async () => {
    const clock = new FakeClock();
    const { limiters, settle } = fleet(clock, 'drop');
    let capacity = 32;
    // 100 ms a request: 320 a second at 32 at once, 80 at 8.
    const run = simulateFleet(
      limiters,
      clock,
      capacityApi(() => capacity, 100),
      6000,
      64,
      settle,
    );
    void (async () => {
      while (clock.now() < 4000) await flush();
      capacity = 8;
      while (clock.now() < 14_000) await flush();
      capacity = 32;
    })();
    const r = await run;
    expect(r.done).toBe(6000);
    const before = Math.max(...r.perSecond.slice(1, 4));
    expect(before).toBeGreaterThanOrEqual(0.9 * 320);
    expect(Math.max(...r.perSecond.slice(6, 14))).toBeLessThanOrEqual(0.3 * before);
    // Back at 0.9 of before within 10 s of the return (the seconds 14 to 23): 2 to 8 s in these runs.
    expect(Math.max(...r.perSecond.slice(14, 24))).toBeGreaterThanOrEqual(0.9 * before);
    expect(r.refused / 6000).toBeLessThan(0.12);
  }, 120_000);

  it('keeps four processes sharing a rate limit of 200 a second at it, every request through', async () => {
    const clock = new FakeClock();
    const { limiters, settle } = fleet(clock, 'rate');
    const bucket = tokenBucketApi(200, 20);
    const r = await simulateFleet(limiters, clock, bucket, 2000, 64, settle);
    expect(r.done).toBe(2000);
    // 2000 at 200 a second: 10 s at best. The refusals (docs/performance.md) are the workers' concurrency probes: at
    // 20 ms a rate of 200 is 4 at once, one each, and a probe is one more. How many depends on the order in which the
    // real Redis answers the four (more with other test files beside it): this bound refuses a storm.
    expect(r.ms).toBeLessThan(10_000 / 0.9);
    expect(r.refused / 2000).toBeLessThan(0.1);
  }, 120_000);
});
