/**
 * Adaptive concurrency gate: at most `limit` operations in flight; halves on 429 and waits out Retry-After; grows back
 * on success.
 */
export class Throttle {
  #limit: number;
  readonly #max: number;
  #inFlight = 0;
  #pausedUntil = 0;
  #successes = 0;
  readonly #waiters: (() => void)[] = [];
  readonly #minIntervalMs: number;
  #nextStart = 0;

  constructor(max: number, maxRps?: number) {
    this.#max = Math.max(1, max);
    this.#limit = this.#max;
    this.#minIntervalMs = maxRps ? 1000 / maxRps : 0;
  }

  /** Current concurrency limit. */
  get limit(): number {
    return this.#limit;
  }

  /** Resolves when an operation may start (within the limit, after any pause, within the max rate). */
  async acquire(): Promise<void> {
    for (;;) {
      const now = Date.now();
      if (now < this.#pausedUntil) {
        await sleep(this.#pausedUntil - now);
        continue;
      }
      if (this.#inFlight < this.#limit) break;
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
    this.#inFlight++;
    if (this.#minIntervalMs > 0) {
      const now = Date.now();
      const start = Math.max(now, this.#nextStart);
      this.#nextStart = start + this.#minIntervalMs;
      if (start > now) await sleep(start - now);
    }
  }

  /** Frees a slot; successes slowly raise the limit back (additive increase). */
  release(ok = true): void {
    this.#inFlight--;
    if (ok && this.#limit < this.#max && ++this.#successes >= this.#limit) {
      this.#successes = 0;
      this.#limit++;
    }
    this.#wake();
  }

  /** A 429 was seen: halve the limit (multiplicative decrease) and pause every start until Retry-After has passed. */
  rateLimited(retryAfterMs: number | null): void {
    this.#limit = Math.max(1, Math.floor(this.#limit / 2));
    this.#successes = 0;
    this.#pausedUntil = Math.max(this.#pausedUntil, Date.now() + (retryAfterMs ?? 1000));
  }

  #wake(): void {
    // Each woken waiter re-checks the limit itself, so waking one per freed slot is enough.
    this.#waiters.shift()?.();
  }
}

/** Opens after `threshold` consecutive retryable failures; any success closes it again. */
export class CircuitBreaker {
  #consecutive = 0;
  #open = false;
  constructor(readonly threshold: number) {}

  /** True once the circuit has opened. */
  get open(): boolean {
    return this.#open;
  }

  /** Records a success. */
  success(): void {
    this.#consecutive = 0;
  }

  /** Records a retryable failure; returns true when this opened the circuit. */
  failure(): boolean {
    if (++this.#consecutive >= this.threshold && !this.#open) {
      this.#open = true;
      return true;
    }
    return false;
  }
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
