/** Concurrent calls for one key share one promise; the key is free again once it settles. */
export class SingleFlight<T> {
  readonly #inFlight = new Map<string, Promise<T>>();

  /** Runs `work` for `key` unless a run for it is already under way, whose result is shared. */
  run(key: string, work: () => Promise<T>): Promise<T> {
    const running = this.#inFlight.get(key);
    if (running) return running;
    const p = work().finally(() => this.#inFlight.delete(key));
    this.#inFlight.set(key, p);
    return p;
  }
}
