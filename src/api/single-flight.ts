/** Concurrent calls for one key share one promise; the key is free again once it settles (success or failure). */
export class SingleFlight<T> {
  readonly #inFlight = new Map<string, Promise<T>>();

  /** Runs `work` for `key` unless a run for it is already under way, whose result (or rejection) is shared. */
  run(key: string, work: () => Promise<T>): Promise<T> {
    const running = this.#inFlight.get(key);
    if (running) return running;
    // An async wrapper turns a synchronous throw of `work` into a rejection every caller sees.
    const p = (async () => work())().finally(() => this.#inFlight.delete(key));
    this.#inFlight.set(key, p);
    return p;
  }

  /** True while a run for `key` is under way. */
  has(key: string): boolean {
    return this.#inFlight.has(key);
  }

  /** How many keys have a run under way. */
  get size(): number {
    return this.#inFlight.size;
  }
}
