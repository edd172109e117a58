/**
 * The mean number in flight (across a fleet) the accepted requests of about the last `spanMs` were sent with (two
 * buckets of half of it). A capacity refuses the requests sent with more in flight than it accepts, so its refusals
 * lie above this mean; a rate limit refuses whatever is in flight, so many of its refusals lie at or below it.
 */
export class AcceptedMean {
  readonly #half: number;
  #at = -Infinity;
  #now = { n: 0, sum: 0 };
  #last = { n: 0, sum: 0 };

  constructor(spanMs = 1000) {
    this.#half = spanMs / 2;
  }

  /** An accepted request sent with `inFlight` in flight, answered at `now`. */
  add(inFlight: number, now: number): void {
    this.#roll(now);
    this.#now.n++;
    this.#now.sum += inFlight;
  }

  /** The mean in flight the accepted requests of late were sent with (0: none). */
  mean(now: number): number {
    this.#roll(now);
    const n = this.#now.n + this.#last.n;
    return n === 0 ? 0 : (this.#now.sum + this.#last.sum) / n;
  }

  #roll(now: number): void {
    if (now - this.#at < this.#half) return;
    this.#last = now - this.#at < 2 * this.#half ? this.#now : { n: 0, sum: 0 };
    this.#now = { n: 0, sum: 0 };
    this.#at = now;
  }
}
