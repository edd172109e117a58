/**
 * The rows a run has in flight: at most `max` at once (their requests are bounded and paced by the product API's
 * limiter, src/api/api-limiter.ts, which learns the API's limits).
 */
export class Throttle {
  readonly #max: number;
  #inFlight = 0;
  readonly #waiters: (() => void)[] = [];

  constructor(max: number) {
    this.#max = Math.max(1, max);
  }

  /** Rows allowed in flight. */
  get limit(): number {
    return this.#max;
  }

  /** Resolves when a row may start. */
  async acquire(): Promise<void> {
    while (this.#inFlight >= this.#max) await new Promise<void>((resolve) => this.#waiters.push(resolve));
    this.#inFlight++;
  }

  /** Frees a row's place (`ok`: whether it succeeded; kept for the callers, the gate does not learn from it). */
  release(_ok = true): void {
    this.#inFlight--;
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
