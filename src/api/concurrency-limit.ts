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
  /** Starting limit (default min(8, max)); it grows by half each round trip until the first refusal or queue. */
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
  /**
   * Share of a window the client's own event loop was busy at or above which its latency is not read as a queue at
   * the server (default 0.85): answers then wait on the client's CPU, which a lower limit would not relieve.
   */
  clientBusy: number;
  /**
   * Every so often, ms (default 10 000; 0: never), the limit is pinned at a quarter for a few answers and their latency
   * becomes the baseline: a latency that rose for everyone (a slower API, a loaded machine) is then no longer read as a
   * queue of ours (as Envoy's adaptive concurrency re-measures its minimum RTT).
   */
  refreshMs: number;
}

/** The busy share of this process's event loop since the last call (0–1). */
export type LoopBusy = () => number;

/** The event loop's utilisation (Node's `performance.eventLoopUtilization`) since the previous call. */
export function eventLoopBusy(): LoopBusy {
  let last = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const share = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    return share;
  };
}

/** One latency window: what was seen since it started. */
interface Window {
  start: number;
  samples: number;
  sumMs: number;
  maxInFlight: number;
}

/**
 * The slow start's growth per answer. One per answer (doubling each round trip) overshot a token bucket's rate the
 * most just as its burst ran out: every request sent in that last round trip past the rate was refused.
 */
const SLOW_START_STEP = 0.5;

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
  /** No-load latency: the lowest window average of the recent windows, until a refresh measures it. */
  readonly #baselines: number[] = [];
  /** The latency measured at the last refresh (the limit pinned low): the baseline from then on. */
  #measured: number | null = null;
  #window: Window;
  /** Last window's average latency, ms (null before the first). */
  latencyMs: number | null = null;
  /** The last accepted answer's latency, ms. */
  #lastRttMs: number | null = null;
  readonly #loopBusy: LoopBusy;
  /** The next baseline refresh (0: after the first window). */
  #refreshAt = 0;
  /** A refresh in progress: the limit pinned, the latency of the requests sent since `since`. */
  #pin: { since: number; limit: number; samples: number; sumMs: number } | null = null;

  /** `loopBusy`: how busy the client's event loop was (default: never; the limiter gives the real one). */
  constructor(tuning: Partial<ConcurrencyTuning> & { max: number }, loopBusy: LoopBusy = () => 0) {
    this.#loopBusy = loopBusy;
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
      clientBusy: 0.85,
      refreshMs: 10_000,
    };
    this.#t = { ...defaults, ...tuning, max };
    this.#limit = Math.min(this.#t.max, Math.max(1, this.#t.initial));
    this.#window = { start: 0, samples: 0, sumMs: 0, maxInFlight: 0 };
    this.#holdMs = this.#t.holdMs;
  }

  /** The whole number of requests allowed in flight now. */
  get limit(): number {
    const limit = Math.max(1, Math.floor(this.#limit));
    return this.#pin ? Math.min(limit, this.#pin.limit) : limit;
  }

  /** The API's round trip as last seen: the last window's latency, else the last answer's, else a window's length. */
  get roundTripMs(): number {
    return this.latencyMs ?? this.#lastRttMs ?? this.#t.windowMs;
  }

  /** Notes the number in flight (a window grows the limit only when it was used). */
  started(inFlight: number): void {
    if (inFlight > this.#window.maxInFlight) this.#window.maxInFlight = inFlight;
  }

  /** An answer that was not a refusal, after `rttMs`; closes the window once it holds `limit` answers. */
  answered(rttMs: number, now: number): void {
    this.#lastRttMs = rttMs;
    if (this.#pin) return this.#pinned(rttMs, now);
    // Slow start: half a place more for each answer (half as much again each round trip), as long as the limit is used.
    if (this.#slowStart && this.#window.maxInFlight >= this.limit - 1)
      this.#limit = Math.min(this.#t.max, this.#limit + SLOW_START_STEP);
    const w = this.#window;
    if (w.samples === 0) w.start = now;
    w.samples++;
    w.sumMs += rttMs;
    if (w.samples >= Math.max(4, this.limit) && now - w.start >= this.#t.windowMs) this.#closeWindow(now);
  }

  /**
   * A 429 / 503 of a request sent at `sentAt`: lowers the limit unless it was sent before the last lowering (that
   * lowering already answered it), by the tuning's backoff or `steeper` when lower (a fleet's overshoot).
   * `ahead`: the requests the API held accepted when it refused it, if known (one process) — the
   * limit then falls to that at once (at most by half), not by a tenth a refusal: a limit grown far past the API's
   * during its slow start came down one refusal at a time, each a request refused. Returns true when it lowered it.
   */
  refused(sentAt: number, now: number, ahead?: number, steeper = 1): boolean {
    if (sentAt < this.#loweredAt) return false;
    const atTop = this.#top === null || this.#limit >= 0.8 * this.#top;
    // The limit it was refused at: one past what the API held, when known.
    const refusedAt = ahead === undefined ? this.#limit : Math.min(this.#limit, ahead + 1);
    if (this.#probing || this.#slowStart) this.#top = Math.max(this.#top ?? 0, refusedAt);
    // A refused probe: hold longer (fourfold; below the top, at most `belowTopHoldMs`, to find a capacity that
    // comes back); a refusal while holding below the ceiling: the API changed, start over.
    const most = atTop ? this.#t.maxHoldMs : this.#t.belowTopHoldMs;
    // A refusal while holding at about the ceiling (within one of it) is the same limit, not a change: the requests
    // sent just after a refused probe's lowering still find the API drained by the probe. Its longer hold is kept
    // (a reset made a steady token bucket's limit probe again every few seconds).
    const same = !this.#probing && this.#ceiling !== null && now < this.#holdUntil && refusedAt >= this.#ceiling - 1;
    if (this.#probing) this.#holdMs = Math.min(most, this.#holdMs * 4);
    else if (!same) this.#holdMs = this.#t.holdMs;
    else this.#holdMs = Math.min(most, this.#holdMs);
    this.#probing = false;
    this.#holdUntil = now + this.#holdMs;
    this.#ceiling = refusedAt;
    const lower = this.#limit * Math.min(this.#t.backoff, steeper);
    this.#limit = Math.max(1, ahead === undefined ? lower : Math.max(this.#limit / 2, Math.min(lower, ahead)));
    this.#slowStart = false;
    this.#loweredAt = now;
    this.#window = { start: now, samples: 0, sumMs: 0, maxInFlight: 0 };
    this.#pin = null;
    this.#refreshAt = now + this.#t.refreshMs;
    return true;
  }

  /**
   * Another process of the fleet was refused: lowered as by a refusal of its own (`steeper`: as there) when `above` its
   * share or in its slow start (the fleet reached the API's capacity), at most once per round trip.
   */
  crowded(now: number, above: boolean, steeper = 1): void {
    if ((above || this.#slowStart) && now - this.#loweredAt >= this.roundTripMs)
      this.refused(now, now, undefined, steeper);
  }

  /** An answer while the limit is pinned: once enough sent since the pin answered, their latency is the baseline. */
  #pinned(rttMs: number, now: number): void {
    const pin = this.#pin!;
    if (now - rttMs < pin.since) return;
    pin.samples++;
    pin.sumMs += rttMs;
    if (pin.samples < Math.max(4, 2 * pin.limit)) return;
    this.#measured = pin.sumMs / pin.samples;
    this.#pin = null;
    this.#refreshAt = now + this.#t.refreshMs;
    this.#window = { start: 0, samples: 0, sumMs: 0, maxInFlight: 0 };
  }

  #closeWindow(now: number): void {
    const w = this.#window;
    const rtt = w.sumMs / w.samples;
    this.latencyMs = rtt;
    if (this.#measured === null) this.#baselines.push(rtt);
    // About the last 100 windows: a baseline that rose for good (a slower API) is taken up after them.
    if (this.#baselines.length > 100) this.#baselines.shift();
    const base = this.#measured ?? Math.min(...this.#baselines);
    const queue = this.#limit * (1 - base / Math.max(rtt, base));
    const used = w.maxInFlight >= this.limit / 2;
    const busy = this.#loopBusy();
    this.#window = { start: 0, samples: 0, sumMs: 0, maxInFlight: 0 };
    if (this.#t.refreshMs > 0 && !this.#slowStart) {
      if (this.#refreshAt === 0) this.#refreshAt = now + this.#t.refreshMs;
      else if (now >= this.#refreshAt && this.limit >= 4) {
        this.#pin = { since: now, limit: Math.max(1, Math.floor(this.limit / 4)), samples: 0, sumMs: 0 };
        return;
      }
    }
    // Netflix's Vegas scales its thresholds with log10 of the limit: a queue of 6 is much at 8 in flight, little at 64.
    const scale = Math.max(1, Math.log10(this.#limit));
    const alpha = this.#t.alpha * scale;
    const beta = this.#t.beta * scale;
    // A client whose own CPU is the bottleneck sees its answers late: that latency is no queue at the server, and a
    // lower limit would only cut the throughput. The limit holds (a 429 still lowers it).
    if (queue >= alpha && busy >= this.#t.clientBusy) return;
    if (queue > beta) {
      this.#slowStart = false;
      this.#limit = Math.max(1, this.#limit - Math.max(1, (queue - beta) / 2));
      return;
    }
    if (queue >= alpha || !used || this.#slowStart) return;
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
