/**
 * Time as the owner lease, the job locks and the deadlines read it and wait for it: the wall clock, the monotonic
 * clock, sleeping and timers. Code that decides by time takes a Clock, the real one by default; its tests pass a fake
 * one (test/helpers/clock.ts) and move it by hand instead of waiting for real TTLs to run out.
 */
export interface Clock {
  /** Wall-clock milliseconds since the epoch (`Date.now()`). */
  now(): number;
  /** Monotonic milliseconds (`performance.now()`): never set back or forth with the system clock. */
  mono(): number;
  /** Resolves after `ms`. */
  sleep(ms: number): Promise<void>;
  /** Calls `fn` once after `ms`; the timer keeps no process alive. Returns what cancels it. */
  after(ms: number, fn: () => void): () => void;
  /** Calls `fn` every `ms` until cancelled; the timer keeps no process alive. Returns what cancels it. */
  every(ms: number, fn: () => void): () => void;
}

/** The machine's clocks and Node's timers. */
export const realClock: Clock = {
  now: () => Date.now(),
  mono: () => performance.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  after(ms, fn) {
    const timer = setTimeout(fn, ms);
    timer.unref();
    return () => clearTimeout(timer);
  },
  every(ms, fn) {
    const timer = setInterval(fn, ms);
    timer.unref();
    return () => clearInterval(timer);
  },
};
