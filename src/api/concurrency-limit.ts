/**
 * How many requests to have in flight, learned from the API's latency and answers (Vegas-style, as in Netflix's
 * concurrency-limits): the queue at the server is estimated each window as `limit × (1 − baseline / latency)`; a
 * short queue lets the limit grow, a long one shrinks it. A 429 / 503 lowers it gently (× 0.9), at most once per
 * window: only a refusal of a request sent after the last lowering counts. Near the limit it was refused at, it holds
 * still for a while (`holdMs`), then probes one more: a probe refused doubles the hold (up to `maxHoldMs`), so an API
 * whose capacity stays put is probed rarely (each probe costs a refused request its Retry-After, and one late in a
 * run delays its end by as much). Well below the highest limit a probe was refused at (the capacity fell), the hold
 * grows to `belowTopHoldMs` at most: a capacity that comes back is found within seconds.
 */

/** Tuning of {@link ConcurrencyLimit}. */
export interface ConcurrencyTuning {
  /** Starting limit (default min(8, max)); it doubles each round trip until the first refusal or queue. */
  initial: number;
  /** Upper bound (API_CONCURRENCY). */
  max: number;
  /** Estimated queue below which the limit grows (default 3). */
  alpha: number;
  /** Estimated queue above which it shrinks (default 6). */
  beta: number;
  /** Factor of a refusal (default 0.9). */
  backoff: number;
  /** Time the limit stays below the limit it was refused at before probing it again, ms (default 2000). */
  holdMs: number;
  /** The hold grows fourfold with each probe refused at the top, up to this, ms (default 16000). */
  maxHoldMs: number;
  /** …and up to this below 0.8 of the top (a capacity that fell, and may come back), ms (default 6000). */
  belowTopHoldMs: number;
  /** A window lasts at least this long, ms (default 100), and holds at least `limit` answers. */
  windowMs: number;
}

/** One latency window: what was seen since it started. */
interface Window {
  start: number;
  samples: number;
  sumMs: number;
  maxInFlight: number;
}

/** The adaptive concurrency limit. Time is given by the caller (an injectable clock). */
export class ConcurrencyLimit {
  readonly #t: ConcurrencyTuning;
  #limit: number;
  /** One more per answer until the first sign of a queue or a refusal. */
  #slowStart = true;
  /** The limit of the last refusal: growth slows near it; forgotten once well past it. */
  #ceiling: number | null = null;
  #loweredAt = -Infinity;
  /** No growth to the ceiling before this time. */
  #holdUntil = 0;
  #holdMs: number;
  /** True once the limit has grown past the ceiling − 1 after a hold: a refusal then answers the probe. */
  #probing = false;
  /** The highest limit a probe was refused at: the API's capacity as far as known (null once grown past it). */
  #top: number | null = null;
  /** No-load latency: the lowest window average of the recent windows. */
  readonly #baselines: number[] = [];
  #window: Window;
  /** Last window's average latency, ms (null before the first). */
  latencyMs: number | null = null;

  constructor(tuning: Partial<ConcurrencyTuning> & { max: number }) {
    const max = Math.max(1, tuning.max);
    const defaults = {
      initial: Math.min(8, max),
      alpha: 3,
      beta: 6,
      backoff: 0.9,
      holdMs: 2000,
      maxHoldMs: 16_000,
      belowTopHoldMs: 6000,
      windowMs: 100,
    };
    this.#t = { ...defaults, ...tuning, max };
    this.#limit = Math.min(this.#t.max, Math.max(1, this.#t.initial));
    this.#window = { start: 0, samples: 0, sumMs: 0, maxInFlight: 0 };
    this.#holdMs = this.#t.holdMs;
  }

  /** The whole number of requests allowed in flight now. */
  get limit(): number {
    return Math.max(1, Math.floor(this.#limit));
  }

  /** Notes the number in flight (a window grows the limit only when it was used). */
  started(inFlight: number): void {
    if (inFlight > this.#window.maxInFlight) this.#window.maxInFlight = inFlight;
  }

  /** An answer that was not a refusal, after `rttMs`; closes the window once it holds `limit` answers. */
  answered(rttMs: number, now: number): void {
    // Slow start: one more for each answer (doubling each round trip), as long as the limit is used.
    if (this.#slowStart && this.#window.maxInFlight >= this.limit - 1)
      this.#limit = Math.min(this.#t.max, this.#limit + 1);
    const w = this.#window;
    if (w.samples === 0) w.start = now;
    w.samples++;
    w.sumMs += rttMs;
    if (w.samples >= Math.max(4, this.limit) && now - w.start >= this.#t.windowMs) this.#closeWindow(now);
  }

  /**
   * A 429 / 503 of a request sent at `sentAt`: lowers the limit unless it was sent before the last lowering (that
   * lowering already answered it). Returns true when it lowered the limit.
   */
  refused(sentAt: number, now: number): boolean {
    if (sentAt < this.#loweredAt) return false;
    const atTop = this.#top === null || this.#limit >= 0.8 * this.#top;
    if (this.#probing || this.#slowStart) this.#top = Math.max(this.#top ?? 0, this.#limit);
    // A refused probe: hold longer (fourfold; below the top, at most `belowTopHoldMs`, to find a capacity that
    // comes back); a refusal while holding: the API changed, start over.
    const most = atTop ? this.#t.maxHoldMs : this.#t.belowTopHoldMs;
    this.#holdMs = this.#probing ? Math.min(most, this.#holdMs * 4) : this.#t.holdMs;
    this.#probing = false;
    this.#holdUntil = now + this.#holdMs;
    this.#ceiling = this.#limit;
    this.#limit = Math.max(1, this.#limit * this.#t.backoff);
    this.#slowStart = false;
    this.#loweredAt = now;
    this.#window = { start: now, samples: 0, sumMs: 0, maxInFlight: 0 };
    return true;
  }

  #closeWindow(now: number): void {
    const w = this.#window;
    const rtt = w.sumMs / w.samples;
    this.latencyMs = rtt;
    this.#baselines.push(rtt);
    // About the last 100 windows: a baseline that rose for good (a slower API) is taken up after them.
    if (this.#baselines.length > 100) this.#baselines.shift();
    const base = Math.min(...this.#baselines);
    const queue = this.#limit * (1 - base / Math.max(rtt, base));
    const used = w.maxInFlight >= this.limit / 2;
    this.#window = { start: 0, samples: 0, sumMs: 0, maxInFlight: 0 };
    if (queue > this.#t.beta) {
      this.#slowStart = false;
      this.#limit = Math.max(1, this.#limit - Math.max(1, (queue - this.#t.beta) / 2));
      return;
    }
    if (queue >= this.#t.alpha || !used || this.#slowStart) return;
    const near = this.#ceiling !== null && this.#limit + 1 >= this.#ceiling - 1;
    if (near && now < this.#holdUntil) {
      // Up to just below the ceiling, not to it, while holding.
      if (this.#ceiling !== null && this.#limit < this.#ceiling - 1) this.#limit = this.#ceiling - 1;
      return;
    }
    if (near) this.#probing = true;
    // Past the hold, near the ceiling: slowly at first (1/8 a window), twice as fast every 8 windows refused nothing.
    const probe = near ? Math.min(1, 2 ** (Math.floor((now - this.#holdUntil) / (8 * this.#t.windowMs)) - 3)) : 1;
    this.#limit = Math.min(this.#t.max, this.#limit + probe);
    // Well past it: the capacity grew; the next refusal starts a fresh hold.
    if (this.#ceiling !== null && this.#limit > this.#ceiling + 2) {
      this.#ceiling = null;
      this.#probing = false;
      if (this.#top !== null && this.#limit > this.#top + 2) this.#top = null;
    }
  }
}
