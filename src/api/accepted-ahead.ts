/**
 * How many requests the API held accepted when it refused one: the requests sent before the refused one that were
 * accepted (still in flight when its refusal came back, or answered since it was sent). A capacity refuses only with
 * as many as it holds ahead; a rate limit refuses with any number ahead, fewer than it held when it began refusing
 * (a token bucket's burst is gone, the requests ahead are the rate's). One process's count (src/api/api-limiter.ts).
 */

/** Accepted answers remembered for the count (a round trip's worth at most is needed). */
const REMEMBERED = 1024;

/** Requests in flight in the order they were sent, and the last accepted answers. */
export class AcceptedAhead {
  #seq = 0;
  /** The sequence numbers in flight, in the order they were sent (a Set iterates in insertion order). */
  readonly #flying = new Set<number>();
  /** Ring of the last accepted answers: the sequence number each was sent as, and when it was answered. */
  readonly #okSeq = new Float64Array(REMEMBERED);
  readonly #okAt = new Float64Array(REMEMBERED);
  #next = 0;
  #count = 0;

  /** A request is sent: its sequence number. */
  sent(): number {
    const seq = ++this.#seq;
    this.#flying.add(seq);
    return seq;
  }

  /** A request is answered at `now` (`ok`: accepted). */
  answered(seq: number, ok: boolean, now: number): void {
    this.#flying.delete(seq);
    if (!ok) return;
    this.#okSeq[this.#next] = seq;
    this.#okAt[this.#next] = now;
    this.#next = (this.#next + 1) % REMEMBERED;
    if (this.#count < REMEMBERED) this.#count++;
  }

  /** Requests accepted ahead of request `seq`, sent at `sentAt`: in flight still, or answered since `sentAt`. */
  ahead(seq: number, sentAt: number): number {
    let n = 0;
    for (const s of this.#flying) {
      if (s >= seq) break;
      n++;
    }
    for (let i = 1; i <= this.#count; i++) {
      const k = (this.#next - i + REMEMBERED) % REMEMBERED;
      if (this.#okAt[k]! <= sentAt) break;
      if (this.#okSeq[k]! < seq) n++;
    }
    return n;
  }
}
