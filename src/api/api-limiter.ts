import { setTimeout as sleep } from 'node:timers/promises';
import { AcceptedAhead } from './accepted-ahead.ts';
import { ConcurrencyLimit, eventLoopBusy, type ConcurrencyTuning, type LoopBusy } from './concurrency-limit.ts';
import { AcceptedWith, RatePace, type PaceTuning } from './rate-pace.ts';

/** Time as the limiter sees it: a monotonic clock in ms and a sleep (tests give their own). */
export interface LimiterClock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The process's clock. */
export const REAL_CLOCK: LimiterClock = {
  now: () => performance.now(),
  sleep: (ms, signal) => sleep(ms, undefined, signal ? { signal } : undefined),
};

/**
 * The pace a fleet of processes shares (src/api/shared-rate.ts over Redis): `reserve` books this process's next
 * start and says how long to wait for it; null when the fleet's store does not answer (the process then paces itself).
 */
export interface FleetPace {
  reserve(maxRps: number | undefined, inFlight: number): Promise<FleetStart | null>;
  /**
   * A refusal this process saw of a request sent while the fleet had `fleetInFlight` in flight (`acceptedWith`: the
   * most the fleet had in flight at the sending of this process's accepted requests of late; `acceptedMean`: their
   * mean): sets or lowers the fleet's pace when the refusals are a rate limit's (at most once per window, for the
   * whole fleet).
   */
  refused(fleetInFlight: number, acceptedWith: number, acceptedMean: number): void;
  /** The fleet's pace as last seen (requests a second), or null when it has none. */
  readonly pace: number | null;
}

/** A start booked on the fleet's schedule. */
export interface FleetStart {
  /** Milliseconds to wait for it. */
  wait: number;
  /** The fleet's requests in flight, this one included. */
  fleetInFlight: number;
  /** The processes of the fleet heard from of late, this one included. */
  processes?: number;
  /** The refusals the fleet was told of so far (a count that grows). */
  refusals?: number;
}

/** What a request holds while it is in flight. */
export interface ApiPermit {
  readonly sentAt: number;
  /** Its place in the order requests were sent. */
  readonly seq: number;
  /** Requests sent and not answered when this one was sent (itself included). */
  readonly sentWith: number;
  /** The fleet's requests in flight when it was booked (when the pace is the fleet's). */
  readonly fleetWith?: number;
  /** The tally of the run it was acquired for, if any. */
  readonly tally?: LimiterTally;
}

/** How a request ended, for the limiter: an answer, a refusal (429 / 503), or nothing to learn from. */
export type PermitOutcome = 'ok' | 'refused' | 'ignore';

/** What the limiter shows (progress line, /metrics, summary.json). */
export interface LimiterSnapshot {
  /** Requests allowed in flight now. */
  concurrencyLimit: number;
  inFlight: number;
  /** Starts a second the API is paced at (learned, or API_MAX_RPS), null when unpaced. */
  rate: number | null;
  /** 429 / 503 answers so far. */
  refusals: number;
  /** Answers so far (refusals included). */
  answers: number;
  /** Average latency of the last window, ms. */
  latencyMs: number | null;
  /** Milliseconds during which requests waited on the API's limits (a learned pace or limit, a Retry-After). */
  limitedMs: number;
}

/** A fleet's process whose limit is under this share of the fleet's average is below its share (over 1 / it: above). */
const BELOW_SHARE = 0.8;

/**
 * One process: a refusal with at most this share of the requests accepted ahead that the refusals of the last second
 * had is a rate limit's sign. (A fifth fewer, the fleet's share, set a pace on a capacity of 16 in one process on a
 * loaded machine: requests sent together reach the API in another order, and the count ahead reads a few low.)
 */
const RATE_SIGN = 0.5;

/** A tally with nothing counted yet, for {@link ApiLimiter.acquire}. */
export function newTally(): LimiterTally {
  return { answers: 0, refusals: 0, limitedMs: 0, held: 0, heldSince: 0 };
}

/**
 * What one job of a process saw of the limits (a worker runs several chunk jobs at once on one limiter, so the
 * difference of the process's figures over a job would count the others' too): its refusals and answers, and the time
 * during which at least one of its requests waited on the API's limits. Its requests carry it (run-scope.ts).
 */
export interface LimiterTally {
  answers: number;
  refusals: number;
  limitedMs: number;
  held: number;
  heldSince: number;
}

/** Settings of {@link ApiLimiter}. */
export interface ApiLimiterOptions {
  /** API_CONCURRENCY: the limit never goes above it. */
  maxConcurrency: number;
  /** API_MAX_RPS: the pace never goes above it. */
  maxRps?: number;
  clock?: LimiterClock;
  fleet?: FleetPace;
  concurrency?: Partial<ConcurrencyTuning>;
  pace?: Partial<PaceTuning>;
  /** How busy this process's event loop is (default: Node's event loop utilisation; tests give their own). */
  loopBusy?: LoopBusy;
}

/**
 * The product API's limiter: how many requests in flight (learned from latency and refusals) and how fast they start
 * (a pace learned from refusals, shared by the fleet when it has one), both under the configured upper bounds. A
 * refused request is not held here: it waits its own Retry-After (http.ts) while the others go on at the pace.
 */
export class ApiLimiter {
  readonly #clock: LimiterClock;
  readonly #max: number;
  readonly #maxRps: number | undefined;
  #fleet: FleetPace | undefined;
  readonly #concurrency: ConcurrencyLimit;
  readonly #pace: RatePace;
  #inFlight = 0;
  /** Of those, sent (past their start wait). */
  #sent = 0;
  /** The most requests accepted ahead of a refused request that lowered the limit, lately (one process). */
  readonly #refusedAhead = new AcceptedWith();
  /** The most requests accepted ahead of an accepted one, lately (one process, counted while a pace is set). */
  readonly #acceptedAhead = new AcceptedWith();
  readonly #ahead = new AcceptedAhead();
  /** This process's limit against the fleet's average, at its last start (1: its share; 0: no fleet heard from). */
  #shareRatio = 0;
  /** The fleet's count of refusals at this process's last start (null before its first). */
  #fleetRefusals: number | null = null;
  /** The most requests in flight across the fleet the accepted requests of late were sent with, and their mean. */
  readonly #fleetAcceptedWith = new AcceptedWith();
  readonly #waiters: { wake: () => void; reject: (err: Error) => void; signal: AbortSignal | undefined }[] = [];
  /** The signals the waiters' abort listener is on. */
  readonly #watched = new WeakSet<AbortSignal>();
  #nextStart = 0;
  #refusals = 0;
  #answers = 0;
  /** Requests held back by a learned limit or pace, or waiting a Retry-After, now. */
  #held = 0;
  #heldSince = 0;
  #limitedMs = 0;

  constructor(o: ApiLimiterOptions) {
    this.#clock = o.clock ?? REAL_CLOCK;
    this.#max = Math.max(1, o.maxConcurrency);
    this.#maxRps = o.maxRps;
    this.#fleet = o.fleet;
    this.#concurrency = new ConcurrencyLimit(
      { ...o.concurrency, max: this.#max },
      o.loopBusy ?? (o.clock ? () => 0 : eventLoopBusy()),
    );
    this.#pace = new RatePace(o.pace);
  }

  /** Shares the pace with a fleet from now on (set once Redis answers). */
  shareWith(fleet: FleetPace): void {
    this.#fleet = fleet;
  }

  /** Current concurrency limit. */
  get limit(): number {
    return this.#concurrency.limit;
  }

  /**
   * Resolves when a request may start: a free place within the limit, then its start time at the pace. `tally`: the
   * run's, counting what this request sees of the limits.
   */
  async acquire(signal?: AbortSignal, tally?: LimiterTally): Promise<ApiPermit> {
    while (this.#inFlight >= this.#concurrency.limit) {
      const limited = this.#concurrency.limit < this.#max;
      if (limited) this.#hold(1, tally);
      try {
        await this.#place(signal);
      } finally {
        if (limited) this.#hold(-1, tally);
      }
    }
    this.#inFlight++;
    let fleetWith: number | undefined;
    try {
      // Without a fleet the start is decided here and now: no promise to wait on when nothing paces the API.
      const start: { wait: number; fleetInFlight?: number } = this.#fleet ? await this.#fleetStart() : this.#ownStart();
      const wait = start.wait;
      fleetWith = start.fleetInFlight;
      if (wait > 0) {
        this.#hold(1, tally);
        try {
          await this.#clock.sleep(wait, signal);
        } finally {
          this.#hold(-1, tally);
        }
      }
    } catch (err) {
      this.#inFlight--;
      this.#wake();
      throw err;
    }
    this.#sent++;
    this.#concurrency.started(this.#sent);
    const now = this.#clock.now();
    this.#pace.sent(now);
    return {
      sentAt: now,
      seq: this.#ahead.sent(),
      sentWith: this.#sent,
      ...(fleetWith === undefined ? {} : { fleetWith }),
      ...(tally ? { tally } : {}),
    };
  }

  /**
   * Waits for a place to free up (or `signal` to abort). The waiters share one abort listener per signal: a run keeps
   * as many requests waiting here as it has rows in hand, and an EventTarget scans its listeners at each one added.
   */
  #place(signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason as Error);
      if (signal && !this.#watched.has(signal)) {
        this.#watched.add(signal);
        signal.addEventListener('abort', () => this.#abortWaiters(signal), { once: true });
      }
      this.#waiters.push({ wake: resolve, reject, signal });
    });
  }

  #abortWaiters(signal: AbortSignal): void {
    this.#watched.delete(signal);
    for (let i = this.#waiters.length - 1; i >= 0; i--) {
      const w = this.#waiters[i]!;
      if (w.signal !== signal) continue;
      this.#waiters.splice(i, 1);
      w.reject(signal.reason as Error);
    }
  }

  /** Frees the place of a request, learning from how it ended and how long it took. */
  release(permit: ApiPermit, outcome: PermitOutcome): void {
    const now = this.#clock.now();
    // A refused request keeps its place for a round trip (of accepted answers), counted as sent: a 429 comes back at
    // once, and its place given to a waiter at once sent that one into the same refusal, then the next — a worker with
    // many rows in hand spent them all on an API the others filled (or a token bucket just emptied), within
    // milliseconds, each then waiting its Retry-After. (One process tells a rate limit by the requests accepted ahead
    // of a refused one, which the places kept do not count: docs/performance.md.)
    if (outcome === 'refused') void this.#clock.sleep(this.#concurrency.roundTripMs).then(() => this.#free());
    else {
      this.#inFlight--;
      this.#sent--;
    }
    this.#ahead.answered(permit.seq, outcome === 'ok', now);
    const tally = permit.tally;
    if (tally && outcome !== 'ignore') {
      tally.answers++;
      if (outcome === 'refused') tally.refusals++;
    }
    if (outcome === 'ok') {
      this.#answers++;
      this.#concurrency.answered(now - permit.sentAt, now);
      this.#pace.ok(now);
      if (permit.fleetWith !== undefined) {
        this.#fleetAcceptedWith.add(permit.fleetWith, now);
      } else if (this.#pace.engaged) this.#acceptedAhead.add(this.#ahead.ahead(permit.seq, permit.sentAt), now);
    } else if (outcome === 'refused') {
      this.#answers++;
      this.#refusals++;
      const below = this.#shareRatio > 0 && this.#shareRatio < BELOW_SHARE;
      // One process: the requests the API held accepted when it refused this one (counted apart from the refused ones
      // in flight, and from the places they keep). The limit falls to that at once (concurrency-limit.ts).
      const ahead = this.#fleet ? undefined : this.#ahead.ahead(permit.seq, permit.sentAt);
      // Under a pace, a refusal with no more ahead than accepted ones had of late is the pace's to answer, not the
      // limit's (a capacity refuses only past what it accepts): a limit lowered by each was left at a token bucket's
      // rate × latency, and a latency that rose on a loaded machine then cut the rate, the pace holding nothing back.
      const paced = ahead !== undefined && this.#pace.engaged && ahead < this.#acceptedAhead.max(now);
      const steeper = this.#fleetBackoff(permit.fleetWith, now);
      const lowered = !below && !paced && this.#concurrency.refused(permit.sentAt, now, ahead, steeper);
      // A pace answers a rate limit: refusals of requests sent with clearly fewer in flight (a fleet) or fewer accepted
      // ahead (one process) than of late — a capacity refuses only past what it accepts, also while the limit
      // overshoots it at the start and comes down. A fleet's in flight is the fleet's: its store decides
      // (src/api/shared-rate.ts).
      if (this.#fleet && permit.fleetWith !== undefined)
        this.#fleet.refused(permit.fleetWith, this.#fleetAcceptedWith.max(now), this.#fleetAcceptedWith.mean(now));
      else if (ahead !== undefined) {
        // One process: refusals that go on with half as many accepted ahead as at the refusals of the last second —
        // a capacity refuses only when full, with as many ahead each time. (Counted as requests in flight, the refused
        // ones in flight too, a token bucket was told apart only after dozens of refusals at the start.) Once set,
        // each refusal may lower it, once per window.
        const before = this.#refusedAhead.max(now);
        const rateSign = before > 0 && ahead <= Math.max(1, RATE_SIGN * before);
        if (lowered) this.#refusedAhead.add(ahead, now);
        if (this.#pace.engaged || (lowered && rateSign)) this.#pace.refused(now);
      }
    }
    this.#wake();
  }

  /**
   * The factor a refusal lowers this process's limit by in a fleet: the slow starts of its processes overshoot a
   * capacity together, and at the gentle factor of a refusal, once per round trip, the fleet took many round trips
   * (each refusing the excess again) to come back under it. A refusal of a request sent with more in flight
   * across the fleet than its accepted requests were of late (a capacity's sign), or another's while the fleet has that
   * many in flight, lowers the limit in proportion (at most by half) when that is steeper than the gentle factor; else,
   * and alone, the gentle factor (1 here).
   */
  #fleetBackoff(fleetWith: number | undefined, now: number): number {
    if (!this.#fleet || fleetWith === undefined) return 1;
    const accepted = this.#fleetAcceptedWith.max(now);
    if (accepted <= 0 || fleetWith <= accepted) return 1;
    return Math.max(0.5, accepted / fleetWith);
  }

  /** A place held after a refusal is free again. */
  #free(): void {
    this.#inFlight--;
    this.#sent--;
    this.#wake();
  }

  /** Waits a refused request's Retry-After (counted as time on the API's limits, for its run's `tally` too). */
  async waitRetryAfter(ms: number, signal?: AbortSignal, tally?: LimiterTally): Promise<void> {
    this.#hold(1, tally);
    try {
      await this.#clock.sleep(ms, signal);
    } finally {
      this.#hold(-1, tally);
    }
  }

  /** What the limiter shows now. */
  snapshot(): LimiterSnapshot {
    const now = this.#clock.now();
    const rate = this.#rate(now);
    return {
      concurrencyLimit: this.#concurrency.limit,
      inFlight: this.#inFlight,
      rate: rate === null ? null : Math.round(rate * 10) / 10,
      refusals: this.#refusals,
      answers: this.#answers,
      latencyMs: this.#concurrency.latencyMs === null ? null : Math.round(this.#concurrency.latencyMs * 10) / 10,
      limitedMs: Math.round(this.#limitedMs + (this.#held > 0 ? now - this.#heldSince : 0)),
    };
  }

  #rate(now: number): number | null {
    const learned = this.#fleet?.pace ?? this.#pace.current(now);
    if (learned === null) return this.#maxRps ?? null;
    return this.#maxRps === undefined ? learned : Math.min(learned, this.#maxRps);
  }

  /** Milliseconds to wait before this start on the fleet's schedule (and its in flight), or this process's own. */
  async #fleetStart(): Promise<{ wait: number; fleetInFlight?: number }> {
    // Its in flight counts the starts being booked with this one: the sent ones alone left out the starts booked at
    // the same moment, and the fleet's sum read low enough that a capacity's refusals looked like a rate limit's.
    const mine = this.#inFlight;
    const start = await this.#fleet!.reserve(this.#maxRps, mine);
    if (!start) return this.#ownStart();
    this.#share(start, mine);
    return start;
  }

  /**
   * Each process of a fleet about its share of the API: the workers' concurrency limits each grew until one of them
   * was refused, and the one refused (whose request found the API full) was not always one holding more than its share
   * — it fell to one or two in flight while the others kept growing and held the API. So a refusal of its own does not
   * lower a process clearly below the fleet's average, and a refusal anywhere in the fleet lowers one clearly above it
   * (and, during its slow start, one not below it), as by a refusal of its own, at most once per round trip.
   */
  #share(start: FleetStart, mine: number): void {
    const processes = start.processes ?? 1;
    // Its limit, not its count of the moment: answers come back in bursts, and the count right after one is low.
    const fleetAverage = (start.fleetInFlight - mine + this.#concurrency.limit) / processes;
    this.#shareRatio = processes > 1 ? this.#concurrency.limit / fleetAverage : 0;
    if (start.refusals === undefined) return;
    const seen = this.#fleetRefusals;
    this.#fleetRefusals = start.refusals;
    if (seen !== null && start.refusals > seen && this.#shareRatio >= BELOW_SHARE) {
      const now = this.#clock.now();
      const steeper = this.#fleetBackoff(start.fleetInFlight, now);
      this.#concurrency.crowded(now, this.#shareRatio > 1 / BELOW_SHARE, steeper);
    }
  }

  /** Milliseconds to wait before this start at this process's own pace. */
  #ownStart(): { wait: number } {
    const now = this.#clock.now();
    const rate = this.#rate(now);
    if (rate === null) return { wait: 0 };
    const slot = Math.max(now, this.#nextStart);
    this.#nextStart = slot + 1000 / rate;
    return { wait: slot - now };
  }

  #hold(delta: number, tally: LimiterTally | undefined): void {
    const now = this.#clock.now();
    if (this.#held === 0 && delta > 0) this.#heldSince = now;
    this.#held += delta;
    if (this.#held === 0 && delta < 0) this.#limitedMs += now - this.#heldSince;
    if (!tally) return;
    if (tally.held === 0 && delta > 0) tally.heldSince = now;
    tally.held += delta;
    if (tally.held === 0 && delta < 0) tally.limitedMs += now - tally.heldSince;
  }

  #wake(): void {
    // Each woken waiter re-checks the limit itself.
    // A limit that grew lets more than one go.
    for (let free = this.#concurrency.limit - this.#inFlight; free > 0 && this.#waiters.length > 0; free--)
      this.#waiters.shift()!.wake();
  }
}

let processLimiter: ApiLimiter | undefined;

/** Makes `limiter` the one this process's /metrics shows (the runtime's, src/runtime.ts). */
export function showLimiter(limiter: ApiLimiter | undefined): void {
  processLimiter = limiter;
}

/** The limiter this process's /metrics shows, if any. */
export function shownLimiter(): ApiLimiter | undefined {
  return processLimiter;
}
