// A clock the test moves by hand (src/clock.ts): the lease, the job locks and the deadlines read time and set their
// timers through it, so a test lets a TTL run out in a call instead of waiting for it.
import type { Clock } from '../../src/clock.ts';
import { until } from './wait.ts';

interface Timer {
  at: number;
  fn: () => void;
  every?: number;
}

/** A Clock that stands still until `advance()`: both clocks start at now (the wall clock at the real time). */
export class FakeClock implements Clock {
  #wall: number;
  #mono = 0;
  #timers = new Set<Timer>();

  constructor(wall = Date.now()) {
    this.#wall = wall;
  }

  now(): number {
    return this.#wall;
  }

  mono(): number {
    return this.#mono;
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.after(ms, resolve));
  }

  after(ms: number, fn: () => void): () => void {
    const t: Timer = { at: this.#mono + Math.max(0, ms), fn };
    this.#timers.add(t);
    return () => void this.#timers.delete(t);
  }

  every(ms: number, fn: () => void): () => void {
    const t: Timer = { at: this.#mono + Math.max(1, ms), fn, every: Math.max(1, ms) };
    this.#timers.add(t);
    return () => void this.#timers.delete(t);
  }

  /** Timers and sleeps waiting. */
  get pending(): number {
    return this.#timers.size;
  }

  /**
   * Moves both clocks `ms` forward, firing the timers that fall due on the way, in order, each at its own time; after
   * each one, what it started runs until it waits for I/O or for this clock again.
   */
  async advance(ms: number): Promise<void> {
    const end = this.#mono + ms;
    for (;;) {
      await settle();
      let next: Timer | undefined;
      for (const t of this.#timers) if (t.at <= end && (!next || t.at < next.at)) next = t;
      if (!next) break;
      this.#move(next.at);
      if (next.every) next.at += next.every;
      else this.#timers.delete(next);
      next.fn();
    }
    this.#move(end);
    await settle();
  }

  /**
   * Moves both clocks `ms` forward without firing a timer, as a process stopped meanwhile (SIGSTOP, a closed lid):
   * what fell due fires at the next `advance()`, late.
   */
  pause(ms: number): void {
    this.#move(this.#mono + ms);
  }

  /** Sets the wall clock `ms` forward (or back, negative) alone, as a system clock being set; timers do not move. */
  jumpWall(ms: number): void {
    this.#wall += ms;
  }

  #move(mono: number): void {
    this.#wall += mono - this.#mono;
    this.#mono = mono;
  }
}

/**
 * Moves `clock` `stepMs` forward each time the code under test waits on it again — after the real I/O it does in
 * between (a Redis call, a refused connection) — until `done()`; returns how many steps it took.
 */
export async function stepClock(clock: FakeClock, stepMs: number, done: () => boolean): Promise<number> {
  let steps = 0;
  for (;;) {
    await until('the code to wait on the clock', () => clock.pending > 0 || done());
    if (done()) return steps;
    steps++;
    await clock.advance(stepMs);
  }
}

/** Lets pending callbacks and promise reactions run (a few turns of the event loop). */
async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
}
