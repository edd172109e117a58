/**
 * The delay before the next delivery attempt of an event: `baseMs` doubled per attempt already made, with jitter
 * (between half and all of it, so endpoints that fail together do not get their retries together), capped at an hour.
 * -1 once the next attempt would start after the window (`since` + `windowMs`): the event is kept as dead. The first
 * retry comes within `baseMs` (5 s by default).
 */
export function retryDelay(
  attemptsMade: number,
  opts: { baseMs: number; windowMs: number; since: number },
  now: number = Date.now(),
  random: () => number = Math.random,
): number {
  const full = Math.min(opts.baseMs * 2 ** Math.max(0, attemptsMade - 1), MAX_DELAY_MS);
  const delay = Math.round(full / 2 + (random() * full) / 2);
  if (now + delay > opts.since + opts.windowMs) {
    // The last attempt lands at the window's end rather than not at all, when there is time left for one.
    const left = opts.since + opts.windowMs - now;
    return left >= Math.min(opts.baseMs, 1000) ? left : -1;
  }
  return delay;
}

const MAX_DELAY_MS = 3600_000;
