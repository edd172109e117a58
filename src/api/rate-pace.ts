/**
 * The request rate an API accepts, learned from its refusals: no pace until the first 429 / 503; then the rate it
 * accepted just before (a little less), grown back slowly while it refuses nothing, and lowered again — at most once
 * per window — when it does. What a fleet shares through Redis is the same rule (src/api/shared-rate.ts).
 */

/** Tuning of {@link RatePace}; the defaults are what docs/performance.md measured. */
export interface PaceTuning {
  /** A refusal sets the pace to this share of the rate accepted in the last `measureMs` (default 0.95). */
  backoff: number;
  /** Growth per second while the pace is well below the rate it was refused at (default 0.05: 5 %/s). */
  fastGrowth: number;
  /** Growth per second close to that rate (default 0.005): the API is probed there slowly. */
  slowGrowth: number;
  /** The rate accepted is measured over this span, ms (default 500). */
  measureMs: number;
  /** At most one lowering per window, ms (default 250). */
  windowMs: number;
  /** A pace that held nothing back for this long is dropped, ms (default 3000). */
  idleMs: number;
}

/** Defaults of {@link PaceTuning}. */
export const DEFAULT_PACE: PaceTuning = {
  backoff: 0.95,
  fastGrowth: 0.05,
  slowGrowth: 0.005,
  measureMs: 500,
  windowMs: 250,
  idleMs: 3000,
};

/** Accepted answers per second over a sliding span: a ring of completion times. */
export class AcceptedRate {
  readonly #times: Float64Array;
  #next = 0;
  #count = 0;
  #first: number | null = null;

  /** When the first answer was recorded. */
  get firstAt(): number | null {
    return this.#first;
  }

  constructor(capacity = 8192) {
    this.#times = new Float64Array(capacity);
  }

  /** Records one accepted answer at `now`. */
  add(now: number): void {
    this.#first ??= now;
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
    // Fast below 95 % of the ceiling, slow near it; steps of at most 0.1 s.
    for (let left = dt; left > 0; left -= 0.1) {
      const step = Math.min(left, 0.1);
      const near = this.#ceiling !== null && pace >= 0.95 * this.#ceiling;
      pace *= 1 + (near ? this.#t.slowGrowth : this.#t.fastGrowth) * step;
    }
    if (this.#ceiling !== null && pace > 1.05 * this.#ceiling) this.#ceiling = null;
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
    const measured = this.accepted.perSecond(now, this.#t.measureMs);
    if (measured === null || measured === 0) return false;
    const current = this.current(now);
    // A pace well above what was sent did not cause this refusal.
    const sending = this.starts.perSecond(now, this.#t.measureMs);
    if (current !== null && sending !== null && sending < 0.8 * current) return false;
    this.#ceiling = Math.max(current ?? 0, measured);
    if (now - (this.accepted.firstAt ?? now) >= this.#t.measureMs) this.#peak = Math.max(this.#peak, measured);
    // Refusals that do not depend on the rate (a storm of 429s) would lower it for ever: a quarter of the best rate
    // seen is the floor.
    const floor = Math.max(0.5, this.#peak / 4);
    this.#pace = Math.max(floor, Math.min(measured, current ?? Infinity) * this.#t.backoff);
    this.#at = now;
    this.#loweredAt = now;
    this.#bindingAt = now;
    return true;
  }
}
