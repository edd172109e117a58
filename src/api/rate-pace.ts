/**
 * The request rate an API accepts, learned from its refusals: no pace until the first 429 / 503; then the rate it
 * accepted just before (a little less), grown back while it refuses nothing — slowly at first near the rate it was
 * refused at, faster the longer nothing is refused, and doubling about every second once past that rate (as TCP's slow
 * start does: the limit that refused is gone, a capacity that came back) — and lowered again, at most once per window,
 * when it does. What a fleet shares through Redis is the same rule (src/api/shared-rate.ts).
 */

/** Tuning of {@link RatePace}; the defaults are what docs/performance.md measured. */
export interface PaceTuning {
  /** A refusal sets the pace to this share of the rate accepted in the last `measureMs` (default 0.95). */
  backoff: number;
  /**
   * Growth per second while the pace is well below the rate it was refused at (default 0.05: 5 %/s), and the most it
   * grows near that rate.
   */
  fastGrowth: number;
  /**
   * Growth per second close to that rate just after a lowering (default 0.005): the API is probed there slowly at
   * first; it doubles with each second without a lowering, up to `fastGrowth`.
   */
  slowGrowth: number;
  /**
   * Growth per second once the pace went past that rate without a refusal (default 0.7: about doubling each second, in
   * steps of 0.1 s): whatever refused there is gone.
   */
  probeGrowth: number;
  /** The rate accepted is measured over this span, ms (default 500). */
  measureMs: number;
  /** At most one lowering per window, ms (default 250). */
  windowMs: number;
  /** A pace that held nothing back for this long is dropped, ms (default 3000). */
  idleMs: number;
  /** The pace never drops below this, requests a second (default 0.5; API_MIN_RPS). */
  minRps: number;
}

/** Defaults of {@link PaceTuning}. */
export const DEFAULT_PACE: PaceTuning = {
  backoff: 0.95,
  fastGrowth: 0.05,
  slowGrowth: 0.005,
  probeGrowth: 0.7,
  measureMs: 500,
  windowMs: 250,
  idleMs: 3000,
  minRps: 0.5,
};

/** A lowering this long after the last one is a refused probe (the refusals before it had stopped), ms. */
const PROBE_QUIET_MS = 2000;

/** A time this long after the one before starts a new busy spell of {@link AcceptedRate}, ms. */
const IDLE_GAP_MS = 500;

/** Accepted answers per second over a sliding span: a ring of completion times. */
export class AcceptedRate {
  readonly #times: Float64Array;
  #next = 0;
  #count = 0;
  #first: number | null = null;
  #last = -Infinity;
  #busySince: number | null = null;

  /** When the first answer was recorded. */
  get firstAt(): number | null {
    return this.#first;
  }

  /** When the times of late began (the first after a gap of {@link IDLE_GAP_MS} or more). */
  get busySince(): number | null {
    return this.#busySince;
  }

  constructor(capacity = 8192) {
    this.#times = new Float64Array(capacity);
  }

  /** Records one accepted answer at `now`. */
  add(now: number): void {
    this.#first ??= now;
    if (now - this.#last >= IDLE_GAP_MS) this.#busySince = now;
    this.#last = now;
    this.#times[this.#next] = now;
    this.#next = (this.#next + 1) % this.#times.length;
    if (this.#count < this.#times.length) this.#count++;
  }

  /**
   * Answers per second over the last `spanMs` (over the time since the first answer when shorter, at least 50 ms);
   * null before two answers.
   */
  perSecond(now: number, spanMs: number): number | null {
    if (this.#first === null || this.#count < 2) return null;
    const covered = Math.min(spanMs, Math.max(50, now - this.#first));
    let n = 0;
    for (let i = 1; i <= this.#count; i++) {
      const t = this.#times[(this.#next - i + this.#times.length) % this.#times.length]!;
      if (now - t > covered) break;
      n++;
    }
    return (n * 1000) / covered;
  }
}

/**
 * The most requests in flight an accepted request was sent with, and their mean, over about the last `spanMs` (two
 * buckets of half of it): a capacity refuses requests sent with more in flight than that, a rate limit also with
 * clearly fewer.
 */
export class AcceptedWith {
  readonly #half: number;
  #at = -Infinity;
  #now = { most: 0, n: 0, sum: 0 };
  #last = { most: 0, n: 0, sum: 0 };

  constructor(spanMs = 1000) {
    this.#half = spanMs / 2;
  }

  /** An accepted request sent with `inFlight` in flight, answered at `now`. */
  add(inFlight: number, now: number): void {
    this.#roll(now);
    if (inFlight > this.#now.most) this.#now.most = inFlight;
    this.#now.n++;
    this.#now.sum += inFlight;
  }

  /** The most in flight an accepted request was sent with, lately (0: none). */
  max(now: number): number {
    this.#roll(now);
    return Math.max(this.#now.most, this.#last.most);
  }

  /**
   * The mean in flight the accepted requests of late were sent with (0: none). A capacity refuses the requests sent
   * with more in flight than it accepts, so its refusals lie above this mean; a rate limit refuses whatever is in
   * flight, so many of its refusals lie at or below it.
   */
  mean(now: number): number {
    this.#roll(now);
    const n = this.#now.n + this.#last.n;
    return n === 0 ? 0 : (this.#now.sum + this.#last.sum) / n;
  }

  #roll(now: number): void {
    if (now - this.#at < this.#half) return;
    this.#last = now - this.#at < 2 * this.#half ? this.#now : { most: 0, n: 0, sum: 0 };
    this.#now = { most: 0, n: 0, sum: 0 };
    this.#at = now;
  }
}

/**
 * Growth per second of a pace `quietS` seconds after its last lowering: `fastGrowth` well below the rate it was refused
 * at (`ceiling`); near it, from `slowGrowth` doubling every `doublingS` quiet seconds up to `fastGrowth`; past it
 * (`ceiling` null), on doubling up to `probeGrowth`. src/api/shared-rate.ts's script has the same rule.
 */
export function paceGrowth(t: PaceTuning, pace: number, ceiling: number | null, quietS: number, doublingS = 1): number {
  const probing = t.slowGrowth * 2 ** Math.max(0, quietS / doublingS);
  if (ceiling === null) return Math.min(t.probeGrowth, probing);
  if (pace < 0.95 * ceiling) return t.fastGrowth;
  return Math.min(t.fastGrowth, probing);
}

/**
 * The learned pace of request starts (per second), null while the API has refused nothing that a pace would answer
 * (the caller decides: src/api/api-limiter.ts), and again once the pace has not been what held the requests back for
 * a while (the API's limit was elsewhere, or the run sent less).
 */
export class RatePace {
  readonly #t: PaceTuning;
  #pace: number | null = null;
  /** The rate the API last refused at: probed slowly near it; forgotten once well past it. */
  #ceiling: number | null = null;
  #at = 0;
  #loweredAt = -Infinity;
  #checkedAt = -Infinity;
  #bindingAt = -Infinity;
  /** The highest rate accepted at a lowering since the pace was set: the pace stays above a quarter of it. */
  #peak = 0;
  /** The rate accepted at the last lowering. */
  #lastMeasured = 0;
  /**
   * Seconds in which the probe's growth doubles: 1, four times longer (up to 16) each time a probe is refused again at
   * about the same rate near the best one seen (a steady rate limit: probed less and less often), 1 again otherwise.
   */
  #doublingS = 1;
  readonly accepted = new AcceptedRate();
  /** Starts per second (refused ones included): what the pace holds back. */
  readonly starts = new AcceptedRate();

  constructor(tuning: Partial<PaceTuning> = {}) {
    this.#t = { ...DEFAULT_PACE, ...tuning };
  }

  /** True while a pace is set. */
  get engaged(): boolean {
    return this.#pace !== null;
  }

  /** The pace at `now` (grown since its last change), or null. */
  current(now: number): number | null {
    if (this.#pace === null) return null;
    const dt = Math.max(0, now - this.#at) / 1000;
    if (dt === 0) return this.#pace;
    let pace = this.#pace;
    // Steps of at most 0.1 s, each at the growth of where the pace is then (paceGrowth).
    for (let left = dt, t = this.#at; left > 0; left -= 0.1) {
      const step = Math.min(left, 0.1);
      pace *= 1 + paceGrowth(this.#t, pace, this.#ceiling, (t - this.#loweredAt) / 1000, this.#doublingS) * step;
      t += step * 1000;
      if (this.#ceiling !== null && pace > 1.05 * this.#ceiling) this.#ceiling = null;
    }
    this.#pace = pace;
    this.#at = now;
    return pace;
  }

  /** A request starts; a pace that held nothing back for a while is dropped. */
  sent(now: number): void {
    this.starts.add(now);
    if (this.#pace === null || now - this.#checkedAt < 100) return;
    this.#checkedAt = now;
    const sending = this.starts.perSecond(now, this.#t.measureMs);
    const pace = this.current(now)!;
    if (sending === null || sending >= 0.8 * pace) this.#bindingAt = now;
    else if (now - this.#bindingAt > this.#t.idleMs) {
      this.#pace = null;
      this.#ceiling = null;
      this.#peak = 0;
      this.#lastMeasured = 0;
      this.#doublingS = 1;
    }
  }

  /** An accepted answer (the rate measured at the next refusal). */
  ok(now: number): void {
    this.accepted.add(now);
  }

  /**
   * A 429 / 503 a pace should answer: the pace drops to a share of the rate accepted just before — once per window,
   * and only when that rate has been measured (a run younger than the span learns from its concurrency first).
   * Returns true when it set or lowered the pace.
   */
  refused(now: number): boolean {
    if (now - this.#loweredAt < this.#t.windowMs) return false;
    // A first pace waits for a rate measured past the start of the requests: the answers of the first span count a
    // token bucket's burst (a pace set at the start was more than twice the API's rate), or the idle time before them.
    const busy = now - (this.starts.busySince ?? now);
    if (this.#pace === null && busy < 2 * this.#t.measureMs) return false;
    const measured = this.accepted.perSecond(now, this.#t.measureMs);
    if (measured === null || measured === 0) return false;
    const current = this.current(now);
    // A pace well above what was sent did not cause this refusal.
    const sending = this.starts.perSecond(now, this.#t.measureMs);
    if (current !== null && sending !== null && sending < 0.8 * current) return false;
    this.#ceiling = Math.max(current ?? 0, measured);
    if (now - (this.accepted.firstAt ?? now) >= this.#t.measureMs) this.#peak = Math.max(this.#peak, measured);
    // Refusals that do not depend on the rate (a storm of 429s) would lower it for ever: a quarter of the best rate
    // seen is the floor (and `minRps` below it).
    const floor = Math.max(this.#t.minRps, this.#peak / 4);
    this.#pace = Math.max(floor, Math.min(measured, current ?? Infinity) * this.#t.backoff);
    // A probe refused after a quiet while: at the same rate near the best one, the limit is steady; else it moved.
    if (now - this.#loweredAt >= PROBE_QUIET_MS) {
      const same = Math.abs(measured - this.#lastMeasured) <= 0.15 * this.#lastMeasured && measured >= 0.7 * this.#peak;
      this.#doublingS = same ? Math.min(16, this.#doublingS * 4) : 1;
    }
    this.#lastMeasured = measured;
    this.#at = now;
    this.#loweredAt = now;
    this.#bindingAt = now;
    return true;
  }
}
