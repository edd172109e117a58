/**
 * The product API's limits, as real APIs have them (sandbox --faults): a capacity (N requests at once, 429 past it),
 * a rate (a token bucket, 429 with the Retry-After of the next token), a queueing capacity (N served at once, the rest
 * wait: no 429, the latency grows), and a drop of all of them to a share for a while during a run.
 */

/** Limit settings (docs/api-contract.md §Fault injection). */
export interface LimitSpec {
  /** Requests at once; a request past it is answered 429 with Retry-After (`retryAfterSeconds`, default 1). */
  capacity?: number;
  /** Requests a second (a token bucket); past it, 429 with the Retry-After of the next token (whole seconds, ≥ 1). */
  rps?: number;
  /** Size of the bucket (default rps / 10, at least 1). */
  burst?: number;
  /** Requests served at once; the others wait their turn (no 429). */
  queue?: number;
  /** Every limit above multiplied by `factor` from `fromS` to `toS` seconds after the first limited request. */
  drop?: { factor: number; fromS: number; toS: number };
}

/** What a request is told: go on (and call `release` when answered), or be refused with a Retry-After. */
export type Admission = { ok: true; release: () => void } | { ok: false; retryAfterSeconds: number };

/** The limits' state: requests in hand, the bucket, the queue. */
export class ApiLimits {
  readonly #spec: LimitSpec;
  readonly #retryAfterSeconds: number;
  readonly #now: () => number;
  #start: number | null = null;
  #inHand = 0;
  #serving = 0;
  readonly #waiting: (() => void)[] = [];
  #tokens: number;
  #filledAt = 0;

  constructor(spec: LimitSpec, retryAfterSeconds = 1, now: () => number = () => performance.now()) {
    this.#spec = spec;
    this.#retryAfterSeconds = retryAfterSeconds;
    this.#now = now;
    this.#tokens = this.#burst(1);
  }

  /** True when any limit is set. */
  static any(spec: LimitSpec): boolean {
    return spec.capacity !== undefined || spec.rps !== undefined || spec.queue !== undefined;
  }

  /** Admits a request (waiting its turn in the queue), or refuses it. */
  async admit(): Promise<Admission> {
    const now = this.#now();
    this.#start ??= now;
    const f = this.#factor(now);
    const s = this.#spec;
    if (s.capacity !== undefined && this.#inHand >= Math.max(1, Math.floor(s.capacity * f)))
      return { ok: false, retryAfterSeconds: this.#retryAfterSeconds };
    if (s.rps !== undefined) {
      const rate = Math.max(0.001, s.rps * f);
      this.#tokens = Math.min(this.#burst(f), this.#tokens + ((now - this.#filledAt) * rate) / 1000);
      this.#filledAt = now;
      if (this.#tokens < 1) return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - this.#tokens) / rate)) };
      this.#tokens -= 1;
    }
    this.#inHand++;
    if (s.queue !== undefined) {
      while (this.#serving >= Math.max(1, Math.floor(s.queue * this.#factor(this.#now()))))
        await new Promise<void>((resolve) => this.#waiting.push(resolve));
      this.#serving++;
    }
    let released = false;
    return {
      ok: true,
      release: () => {
        if (released) return;
        released = true;
        this.#inHand--;
        if (s.queue !== undefined) {
          this.#serving--;
          this.#waiting.shift()?.();
        }
      },
    };
  }

  #burst(f: number): number {
    const s = this.#spec;
    if (s.rps === undefined) return 0;
    return Math.max(1, (s.burst ?? s.rps / 10) * (s.burst === undefined ? f : 1));
  }

  #factor(now: number): number {
    const d = this.#spec.drop;
    if (!d || this.#start === null) return 1;
    const t = (now - this.#start) / 1000;
    return t >= d.fromS && t < d.toS ? d.factor : 1;
  }
}

/** `0.25@5-15` → a drop to a quarter from 5 s to 15 s; throws on anything else. */
export function parseDrop(raw: string): { factor: number; fromS: number; toS: number } {
  const m = /^\s*([\d.]+)\s*@\s*([\d.]+)\s*-\s*([\d.]+)\s*$/.exec(raw);
  const factor = Number(m?.[1]);
  const fromS = Number(m?.[2]);
  const toS = Number(m?.[3]);
  if (!m || !(factor > 0 && factor <= 1) || !(toS > fromS))
    throw new Error(`fault spec: drop must be "<share>@<from s>-<to s>" (e.g. 0.25@5-15), got "${raw}"`);
  return { factor, fromS, toS };
}
