/**
 * How many requests to have in flight, learned from the API's latency and answers (Vegas-style, as in Netflix's
 * concurrency-limits): the queue at the server is estimated each window as `limit × (1 − baseline / latency)`; a
 * short queue lets the limit grow, a long one shrinks it. A 429 / 503 lowers it gently (× 0.9), at most once per
 * window: only a refusal of a request sent after the last lowering counts. Near the limit it was refused at, it grows
 * slowly at first, so it probes there rarely, and faster the longer nothing is refused (a capacity that came back).
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
  /** Growth per window close to the refused limit (default 1/16). */
  probe: number;
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
  /** Windows closed since the last refusal: the probe near the ceiling doubles every 16 of them. */
  #calmWindows = 0;
  /** No-load latency: the lowest window average of the recent windows. */
  readonly #baselines: number[] = [];
  #window: Window;
  /** Last window's average latency, ms (null before the first). */
  latencyMs: number | null = null;

  constructor(tuning: Partial<ConcurrencyTuning> & { max: number }) {
    const max = Math.max(1, tuning.max);
    const defaults = { initial: Math.min(8, max), alpha: 3, beta: 6, backoff: 0.9, probe: 1 / 16, windowMs: 100 };
    this.#t = { ...defaults, ...tuning, max };
    this.#limit = Math.min(this.#t.max, Math.max(1, this.#t.initial));
    this.#window = { start: 0, samples: 0, sumMs: 0, maxInFlight: 0 };
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
    if (w.samples >= Math.max(4, this.limit) && now - w.start >= this.#t.windowMs) this.#closeWindow();
  }

  /**
   * A 429 / 503 of a request sent at `sentAt`: lowers the limit unless it was sent before the last lowering (that
   * lowering already answered it). Returns true when it lowered the limit.
   */
  refused(sentAt: number, now: number): boolean {
    if (sentAt < this.#loweredAt) return false;
    this.#ceiling = this.#limit;
    this.#limit = Math.max(1, this.#limit * this.#t.backoff);
    this.#slowStart = false;
    this.#loweredAt = now;
    this.#calmWindows = 0;
    this.#window = { start: now, samples: 0, sumMs: 0, maxInFlight: 0 };
    return true;
  }

  #closeWindow(): void {
    const w = this.#window;
    const rtt = w.sumMs / w.samples;
    this.latencyMs = rtt;
    this.#baselines.push(rtt);
    // About the last 100 windows: a baseline that rose for good (a slower API) is taken up after them.
    if (this.#baselines.length > 100) this.#baselines.shift();
    const base = Math.min(...this.#baselines);
    const queue = this.#limit * (1 - base / Math.max(rtt, base));
    const used = w.maxInFlight >= this.limit / 2;
    this.#calmWindows++;
    this.#window = { start: 0, samples: 0, sumMs: 0, maxInFlight: 0 };
    if (queue > this.#t.beta) {
      this.#slowStart = false;
      this.#limit = Math.max(1, this.#limit - Math.max(1, (queue - this.#t.beta) / 2));
      return;
    }
    if (queue >= this.#t.alpha || !used || this.#slowStart) return;
    {
      const near = this.#ceiling !== null && this.#limit >= this.#ceiling - 1;
      // Slow just after a refusal, faster the longer the API refuses nothing (as CUBIC probes past its last loss).
      const probe = Math.min(1, this.#t.probe * 2 ** Math.floor(this.#calmWindows / 16));
      this.#limit = Math.min(this.#t.max, this.#limit + (near ? probe : 1));
      if (this.#ceiling !== null && this.#limit > this.#ceiling + 2) this.#ceiling = null;
    }
  }
}
